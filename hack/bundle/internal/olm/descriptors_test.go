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

package olm_test

import (
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The scorecard's olm tests need a cluster and the scorecard image, neither
// of which "make test" has; these tests make the same checks offline, and a
// stricter one: every descriptor path exists in the CRD schema.

func ownedCRDs(t *testing.T) (map[string]operatorsv1alpha1.CRDDescription, map[string]*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	b := loadBundle(t)
	owned := map[string]operatorsv1alpha1.CRDDescription{}
	for _, o := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		owned[o.Kind] = o
	}
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range b.V1CRDs {
		crds[crd.Spec.Names.Kind] = crd
	}
	return owned, crds
}

// schemaAt walks a dotted descriptor path (array items included) through an
// OpenAPI schema.
func schemaAt(s *apiextensionsv1.JSONSchemaProps, path string) *apiextensionsv1.JSONSchemaProps {
	for _, part := range strings.Split(path, ".") {
		if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
			s = s.Items.Schema
		}
		next, ok := s.Properties[part]
		if !ok {
			return nil
		}
		s = &next
	}
	return s
}

func storageSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.JSONSchemaProps {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return nil
}

func TestDescriptorsMatchTheCRDSchemas(t *testing.T) {
	owned, crds := ownedCRDs(t)
	for kind, o := range owned {
		schema := storageSchema(crds[kind], o.Version)
		if schema == nil {
			t.Fatalf("%s %s has no schema", kind, o.Version)
		}
		for _, d := range o.SpecDescriptors {
			if schemaAt(schema, "spec."+d.Path) == nil {
				t.Errorf("%s spec descriptor %q is not in the CRD schema", kind, d.Path)
			}
			if d.DisplayName == "" || d.Description == "" {
				t.Errorf("%s spec descriptor %q needs a displayName and a description", kind, d.Path)
			}
		}
		for _, d := range o.StatusDescriptors {
			if schemaAt(schema, "status."+d.Path) == nil {
				t.Errorf("%s status descriptor %q is not in the CRD schema", kind, d.Path)
			}
			if d.DisplayName == "" || d.Description == "" {
				t.Errorf("%s status descriptor %q needs a displayName and a description", kind, d.Path)
			}
		}
		// Every top-level spec and status field has a descriptor, so the
		// console shows all of them (scorecard checks only those in the
		// examples).
		for _, section := range []struct {
			name string
			ds   []operatorsv1alpha1.SpecDescriptor
		}{{"spec", o.SpecDescriptors}, {"status", specLike(o.StatusDescriptors)}} {
			props := schema.Properties[section.name].Properties
			for field := range props {
				if !hasPath(section.ds, field) {
					t.Errorf("%s %s.%s has no %s descriptor", kind, section.name, field, section.name)
				}
			}
		}
	}
}

func specLike(ds []operatorsv1alpha1.StatusDescriptor) []operatorsv1alpha1.SpecDescriptor {
	out := make([]operatorsv1alpha1.SpecDescriptor, 0, len(ds))
	for _, d := range ds {
		out = append(out, operatorsv1alpha1.SpecDescriptor{Path: d.Path})
	}
	return out
}

func hasPath(ds []operatorsv1alpha1.SpecDescriptor, path string) bool {
	for _, d := range ds {
		if d.Path == path {
			return true
		}
	}
	return false
}

// TestScorecardOLMChecks mirrors scorecard's basic-check-spec,
// olm-crds-have-validation, olm-crds-have-resources, olm-spec-descriptors
// and olm-status-descriptors.
func TestScorecardOLMChecks(t *testing.T) {
	b := loadBundle(t)
	owned, crds := ownedCRDs(t)

	for kind, o := range owned {
		if len(o.Resources) == 0 {
			t.Errorf("olm-crds-have-resources: %s lists no resources", kind)
		}
	}
	if len(owned["S3GWRemediation"].StatusDescriptors) == 0 {
		t.Error("olm-status-descriptors: S3GWRemediation has no status descriptors")
	}
	conditions := false
	for _, d := range owned["S3GWRemediation"].StatusDescriptors {
		for _, x := range d.XDescriptors {
			conditions = conditions || (d.Path == "conditions" && x == "urn:alm:descriptor:io.kubernetes.conditions")
		}
	}
	if !conditions {
		t.Error("S3GWRemediation status.conditions lacks x-descriptor urn:alm:descriptor:io.kubernetes.conditions")
	}

	for _, cr := range almExamples(t, b.CSV) {
		kind := cr.GetKind()
		o, ok := owned[kind]
		if !ok || o.Version != cr.GroupVersionKind().Version {
			t.Errorf("alm-examples %s %s is not an owned kind and version", kind, cr.GetName())
			continue
		}
		spec, ok := cr.Object["spec"].(map[string]any)
		if !ok || len(spec) == 0 {
			t.Errorf("basic-check-spec: alm-examples %s %s has no spec", kind, cr.GetName())
			continue
		}
		schema := storageSchema(crds[kind], o.Version)
		for field := range spec {
			if _, ok := schema.Properties["spec"].Properties[field]; !ok {
				t.Errorf("olm-crds-have-validation: %s spec.%s is not in the CRD schema", kind, field)
			}
			if !hasPath(o.SpecDescriptors, field) {
				t.Errorf("olm-spec-descriptors: %s spec.%s has no spec descriptor", kind, field)
			}
		}
		if status, ok := cr.Object["status"].(map[string]any); ok && len(status) > 0 && len(o.StatusDescriptors) == 0 {
			t.Errorf("olm-status-descriptors: %s has a status but no status descriptors", kind)
		}
	}
}
