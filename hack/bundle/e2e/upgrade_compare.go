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

package e2e

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRDSchema returns the served schema of the kind's version among crds.
func CRDSchema(crds []*apiextensionsv1.CustomResourceDefinition, gvk schema.GroupVersionKind) (*apiextensionsv1.JSONSchemaProps, error) {
	for _, crd := range crds {
		if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == gvk.Version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				return v.Schema.OpenAPIV3Schema, nil
			}
		}
	}
	return nil, fmt.Errorf("no schema for %s among the CRDs", gvk)
}

// ChangesButDefaults lists how got differs from want, at path, except for
// fields want lacks that got holds with the schema's default: what
// structural defaulting adds on read for a field the old schema did not
// have.
func ChangesButDefaults(want, got any, props apiextensionsv1.JSONSchemaProps, path string) []string {
	wantMap, wantIsMap := want.(map[string]any)
	gotMap, gotIsMap := got.(map[string]any)
	if !wantIsMap || !gotIsMap {
		if equality.Semantic.DeepEqual(want, got) {
			return nil
		}
		return []string{fmt.Sprintf("%s changed: %v, was %v", path, got, want)}
	}
	var changes []string
	for key, w := range wantMap {
		g, ok := gotMap[key]
		if !ok {
			changes = append(changes, fmt.Sprintf("%s.%s removed, was %v", path, key, w))
			continue
		}
		changes = append(changes, ChangesButDefaults(w, g, props.Properties[key], path+"."+key)...)
	}
	for key, g := range gotMap {
		if _, ok := wantMap[key]; ok {
			continue
		}
		if !isDefault(g, props.Properties[key]) {
			changes = append(changes, fmt.Sprintf("%s.%s added: %v, not the schema's default", path, key, g))
		}
	}
	return changes
}

// isDefault reports whether value is the schema's default for the field,
// or, for an object, whether every field of it is its own default.
func isDefault(value any, props apiextensionsv1.JSONSchemaProps) bool {
	if props.Default != nil {
		var def any
		if err := json.Unmarshal(props.Default.Raw, &def); err == nil {
			return equality.Semantic.DeepEqual(normalizeJSON(value), def)
		}
		return false
	}
	fields, ok := value.(map[string]any)
	if !ok {
		return false
	}
	for key, v := range fields {
		if !isDefault(v, props.Properties[key]) {
			return false
		}
	}
	return true
}

// normalizeJSON gives value the types encoding/json decodes to (numbers
// as float64), so that it compares with a decoded default.
func normalizeJSON(value any) any {
	data, err := json.Marshal(value)
	if err != nil {
		return value
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return value
	}
	return out
}
