/*
Copyright 2026 The s3gw-remediation Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package manifests builds the kustomizations of config/ into objects and
// writes objects as multi-document YAML.
package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Build runs kustomize on root/dir and returns the objects in kustomize's
// legacy order, as `kubectl kustomize` and `kustomize build` emit them:
// namespaces and CRDs before what lives in them, so that one `kubectl
// apply -f` of the result succeeds on an empty cluster.
func Build(root, dir string) ([]*unstructured.Unstructured, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	resources, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out := make([]*unstructured.Unstructured, 0, resources.Size())
	for _, r := range resources.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// SetImage sets the image of the container named container in every
// Deployment, and reports whether one had it.
func SetImage(objs []*unstructured.Unstructured, container, image string) (bool, error) {
	found := false
	for _, u := range objs {
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		if err != nil {
			return false, fmt.Errorf("deployment %s: %w", u.GetName(), err)
		}
		for _, c := range containers {
			if m, ok := c.(map[string]any); ok && m["name"] == container {
				m["image"], found = image, true
			}
		}
		if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			return false, err
		}
	}
	return found, nil
}

// Select returns the objects whose kind is one of kinds, in order.
func Select(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		for _, k := range kinds {
			if u.GetKind() == k {
				out = append(out, u)
				break
			}
		}
	}
	return out
}

// YAML writes objs as one YAML stream, each document starting with ---,
// after a comment header (each line prefixed with "# ").
func YAML(header []string, objs []*unstructured.Unstructured) ([]byte, error) {
	var b bytes.Buffer
	for _, line := range header {
		b.WriteString("# " + line + "\n")
	}
	for _, u := range objs {
		data, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.Bytes(), nil
}

// Parse reads a YAML stream into objects, skipping empty documents.
func Parse(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if s := string(bytes.TrimSpace(data)); s == "null" || s == "{}" {
			continue
		}
		// Through unstructured's JSON decoding, so that numbers are int64
		// as in Build's objects.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out = append(out, u)
	}
}
