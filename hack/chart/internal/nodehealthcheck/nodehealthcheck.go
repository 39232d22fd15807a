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

// Package nodehealthcheck reads the one NodeHealthCheck the project ships
// (config/nodehealthcheck/nodehealthcheck.yaml), checks that the chart can
// copy it, and makes the chart's values block of it; package copies
// splices it into config/samples, the CSV's description and the docs.
package nodehealthcheck

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/copies"
	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/manifests"
)

// Source is the definition, relative to the repository root.
const Source = "config/nodehealthcheck/nodehealthcheck.yaml"

// The template the definition references: the one the operator creates at
// start-up (and the chart renders) in config/default's namespace. The
// chart replaces the namespace with the release's.
const (
	TemplateName      = "s3gw-remediation-default-template"
	TemplateNamespace = "s3gw-remediation-system"
)

// Definition is the source, as text and as an object.
type Definition struct {
	copies.Source
	// Object is its one document.
	Object *unstructured.Unstructured
}

// Load reads and checks the definition under root.
func Load(root string) (*Definition, error) {
	src, err := copies.Read(root, Source)
	if err != nil {
		return nil, err
	}
	objs, err := manifests.Parse(src.Text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Source, err)
	}
	if len(objs) != 1 || objs[0].GetKind() != "NodeHealthCheck" {
		return nil, fmt.Errorf("%s must hold exactly one NodeHealthCheck", Source)
	}
	d := &Definition{Source: src, Object: objs[0]}
	if err := d.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", Source, err)
	}
	return d, nil
}

// check holds the source to what the copies rely on: the chart takes every
// key of spec but the template reference from values, and names the
// template and its namespace itself.
func (d *Definition) check() error {
	spec, _, _ := unstructured.NestedMap(d.Object.Object, "spec")
	for key := range spec {
		switch key {
		case "selector", "minHealthy", "unhealthyConditions", "remediationTemplate":
		default:
			return fmt.Errorf("spec.%s is not a value of the chart (charts/s3gw-remediation/templates/nodehealthcheck.yaml)", key)
		}
	}
	if selector, _, _ := unstructured.NestedMap(spec, "selector"); len(selector) == 0 {
		return fmt.Errorf("spec.selector is empty: NodeHealthCheck's webhook requires one")
	}
	ref, _, _ := unstructured.NestedStringMap(spec, "remediationTemplate")
	want := map[string]string{"apiVersion": "s3gw-remediation.medik8s.io/v1alpha1", "kind": "S3GWRemediationTemplate",
		"name": TemplateName, "namespace": TemplateNamespace}
	if fmt.Sprint(ref) != fmt.Sprint(want) {
		return fmt.Errorf("spec.remediationTemplate is %v, want the default template %v", ref, want)
	}
	return nil
}

// ValuesBlock is the chart's nodeHealthCheck values that come from the
// definition, as lines indented by two spaces under nodeHealthCheck: the
// name, and the spec's keys but the template reference, whose lines are
// already indented by two under spec.
func (d *Definition) ValuesBlock() []byte {
	var out bytes.Buffer
	out.WriteString("  name: " + d.Object.GetName() + "\n")
	lines := strings.SplitAfter(string(d.Body()), "\n")
	inSpec, keep := false, false
	for _, line := range lines {
		switch {
		case !strings.HasPrefix(line, " ") && strings.TrimSpace(line) != "":
			// A top-level key: only spec's lines are copied.
			inSpec, keep = strings.HasPrefix(line, "spec:"), false
			continue
		case !inSpec:
			continue
		case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && !strings.HasPrefix(line, "  -"):
			// A key of spec.
			keep = !strings.HasPrefix(line, "  remediationTemplate:")
		}
		if keep {
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

// SpliceValues replaces the values block of the chart's values.yaml.
func (d *Definition) SpliceValues(file string, content []byte) ([]byte, error) {
	begin, end := d.YAMLMarkers("  ")
	return copies.Splice(file, content, begin, end, d.ValuesBlock())
}
