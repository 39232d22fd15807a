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

package worldmodel

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// remediationSchema is the S3GWRemediation CRD's OpenAPI schema, read from
// the generated CRD, so the model defaults a created CR as the API server
// does (the controller is written against defaulted objects).
var remediationSchema = sync.OnceValue(func() map[string]any {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "config", "crd", "bases",
		"s3gw-remediation.medik8s.io_s3gwremediations.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		panic(err)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
})

// applyDefaults fills absent properties from the schema's defaults, then
// descends, as structural defaulting does.
func applyDefaults(obj map[string]any, schema map[string]any) {
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		prop, _ := p.(map[string]any)
		if name == "metadata" || prop == nil {
			continue
		}
		if _, set := obj[name]; !set {
			if d, ok := prop["default"]; ok {
				obj[name] = k8sruntime.DeepCopyJSONValue(d)
			}
		}
		switch v := obj[name].(type) {
		case map[string]any:
			applyDefaults(v, prop)
		case []any:
			items, _ := prop["items"].(map[string]any)
			for _, item := range v {
				if m, ok := item.(map[string]any); ok && items != nil {
					applyDefaults(m, items)
				}
			}
		}
	}
}
