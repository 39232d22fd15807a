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
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestChangesButDefaults(t *testing.T) {
	boolean := func(def string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "boolean", Default: &apiextensionsv1.JSON{Raw: []byte(def)}}
	}
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"release": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"strategy":                               {Type: "string"},
			"acceptStaleReadsWithoutRevisionCounter": boolean("false"),
			"timeout":                                {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte("120")}},
		}},
		"extra": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"on": boolean("true")}},
	}}
	stored := map[string]any{"release": map[string]any{"strategy": "DeleteVolumeAttachment"}}
	release := func(fields map[string]any) map[string]any {
		r := map[string]any{"strategy": "DeleteVolumeAttachment"}
		for k, v := range fields {
			r[k] = v
		}
		return map[string]any{"release": r}
	}
	tests := []struct {
		name    string
		got     map[string]any
		changes int
	}{
		{"unchanged", release(nil), 0},
		{"a new field with its default", release(map[string]any{"acceptStaleReadsWithoutRevisionCounter": false}), 0},
		{"a new number with its default, as an int64", release(map[string]any{"timeout": int64(120)}), 0},
		{"a new object whose fields are defaults", map[string]any{
			"release": map[string]any{"strategy": "DeleteVolumeAttachment"}, "extra": map[string]any{"on": true}}, 0},
		{"a new field not at its default", release(map[string]any{"acceptStaleReadsWithoutRevisionCounter": true}), 1},
		{"a new field without a default", release(map[string]any{"unknown": "x"}), 1},
		{"a stored field changed", map[string]any{"release": map[string]any{"strategy": "OutOfServiceTaint"}}, 1},
		{"a stored field removed", map[string]any{"release": map[string]any{}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ChangesButDefaults(stored, tt.got, spec, "spec"); len(got) != tt.changes {
				t.Errorf("ChangesButDefaults = %q, want %d change(s)", got, tt.changes)
			}
		})
	}
}
