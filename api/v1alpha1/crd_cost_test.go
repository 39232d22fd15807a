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

package v1alpha1_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// The API server refuses a CRD with a rule estimated to cost more than
// this, or whose rules together cost more than the CRD limit
// (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation).
const (
	ruleCostLimit = 10_000_000
	crdCostLimit  = 100_000_000
)

// TestRulesInstallOnMinKubeVersion compiles every CEL rule of the CRDs as
// the oldest API server the CSV allows would: with the libraries new
// expressions may use there, which are those of the minor version before
// it (rollback safety). envtest's newer API server would accept a newer
// library, e.g. the format library of 1.31, that breaks installs on older
// clusters. It also checks the estimated costs the API server admits the
// CRDs by, and logs them.
func TestRulesInstallOnMinKubeVersion(t *testing.T) {
	minKube := csvMinKubeVersion(t)
	envSet := environment.MustBaseEnvSet(version.MajorMinor(minKube.Major(), minKube.Minor()-1))
	for _, crd := range []string{"s3gw-remediation.medik8s.io_s3gwremediations.yaml", "s3gw-remediation.medik8s.io_s3gwremediationtemplates.yaml"} {
		t.Run(crd, func(t *testing.T) {
			schema := structuralSchema(t, filepath.Join("..", "..", "config", "crd", "bases", crd))
			var costs []ruleCost
			walkSchema(schema, "", 1, true, func(path string, node *structuralschema.Structural, cardinality uint64, root bool) {
				results, err := cel.Compile(node, model.SchemaDeclType(node, root), celconfig.PerCallLimit, envSet, cel.NewExpressionsEnvLoader())
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				for i, r := range results {
					if r.Error != nil {
						t.Errorf("%s rule %d does not compile on Kubernetes %s: %v", path, i, minKube, r.Error)
					}
					if r.MessageExpressionError != nil {
						t.Errorf("%s messageExpression %d does not compile on Kubernetes %s: %v", path, i, minKube, r.MessageExpressionError)
					}
					costs = append(costs, ruleCost{path, cardinality * r.MaxCost}, ruleCost{path + " (message)", cardinality * r.MessageExpressionMaxCost})
				}
			})
			var total uint64
			sort.Slice(costs, func(i, j int) bool { return costs[i].cost > costs[j].cost })
			for _, c := range costs {
				total += c.cost
				if c.cost > ruleCostLimit {
					t.Errorf("%s: estimated cost %d exceeds the API server's %d per rule", c.path, c.cost, ruleCostLimit)
				}
			}
			if total > crdCostLimit {
				t.Errorf("estimated cost %d of all rules exceeds the API server's %d per CRD", total, crdCostLimit)
			}
			t.Logf("%d rules, estimated cost %d of %d; most costly: %v", len(costs)/2, total, crdCostLimit, costs[:min(3, len(costs))])
		})
	}
}

type ruleCost struct {
	path string
	cost uint64
}

// walkSchema calls visit for every node with rules, with how many times
// its rules may run in one object: the product of the bounds of the lists
// and maps above it, as the API server estimates them.
func walkSchema(s *structuralschema.Structural, path string, cardinality uint64, root bool,
	visit func(path string, node *structuralschema.Structural, cardinality uint64, root bool)) {
	if len(s.XValidations) > 0 {
		visit(path, s, cardinality, root)
	}
	for name := range s.Properties {
		child := s.Properties[name]
		walkSchema(&child, path+"."+name, cardinality, false, visit)
	}
	var maxItems, maxProperties *int64
	if s.ValueValidation != nil {
		maxItems, maxProperties = s.ValueValidation.MaxItems, s.ValueValidation.MaxProperties
	}
	if s.Items != nil {
		walkSchema(s.Items, path+"[*]", cardinality*bound(maxItems, s.Items), false, visit)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		walkSchema(s.AdditionalProperties.Structural, path+"[*]", cardinality*bound(maxProperties, s.AdditionalProperties.Structural), false, visit)
	}
}

// bound is a list's or map's maximum size, or, unbounded, how many of its
// smallest elements fit in the largest request.
func bound(maxSize *int64, element *structuralschema.Structural) uint64 {
	if maxSize != nil {
		return uint64(*maxSize)
	}
	return uint64(celconfig.MaxRequestSizeBytes / (model.SchemaDeclType(element, false).MinSerializedSize + 1))
}

func structuralSchema(t *testing.T, file string) *structuralschema.Structural {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	readYAML(t, file, crd)
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func csvMinKubeVersion(t *testing.T) *version.Version {
	t.Helper()
	var csv struct {
		Spec struct {
			MinKubeVersion string `json:"minKubeVersion"`
		} `json:"spec"`
	}
	readYAML(t, filepath.Join("..", "..", "config", "manifests", "bases", "s3gw-remediation.clusterserviceversion.yaml"), &csv)
	v, err := version.ParseGeneric(csv.Spec.MinKubeVersion)
	if err != nil {
		t.Fatalf("CSV minKubeVersion: %v", err)
	}
	return v
}

func readYAML(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}
