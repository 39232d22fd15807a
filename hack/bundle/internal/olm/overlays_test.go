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
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The optional kustomizations under config/ are documented install routes
// (docs/install.md, docs/configuration.md); they must build and mean what
// the documentation says.

func TestNoDelegateOverlayDropsOnlyTheDelegateRights(t *testing.T) {
	var generated rbacv1.ClusterRole
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "config/rbac/role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &generated); err != nil {
		t.Fatal(err)
	}
	var trimmed *rbacv1.ClusterRole
	for _, res := range kustomize(t, filepath.Join(repoRoot(t), "config/no-delegate")) {
		if res.GetKind() == "ClusterRole" && res.GetName() == "s3gw-remediation-manager-role" {
			trimmed = &rbacv1.ClusterRole{}
			decode(t, res, trimmed)
		}
	}
	if trimmed == nil {
		t.Fatal("config/no-delegate renders no s3gw-remediation-manager-role")
	}

	delegateKinds := map[string]bool{
		"fenceagentsremediations": true, "fenceagentsremediationtemplates": true,
		"selfnoderemediations": true, "selfnoderemediationtemplates": true,
	}
	var want []rbacv1.PolicyRule
	for _, r := range generated.Rules {
		switch {
		case len(r.Resources) != 1 || !delegateKinds[r.Resources[0]]:
			want = append(want, r)
		case r.Resources[0] == "fenceagentsremediations" || r.Resources[0] == "selfnoderemediations":
			r.Verbs = []string{"list", "watch"} // evidence only
			want = append(want, r)
		}
	}
	if !reflect.DeepEqual(trimmed.Rules, want) {
		t.Errorf("config/no-delegate grants\n%v\nwant config/rbac/role.yaml without the delegate rights:\n%v", trimmed.Rules, want)
	}
}

func TestStandalonePolicyIsNamedAsUnderConfigDefault(t *testing.T) {
	policies := map[string]bool{}
	var bindings []*unstructured.Unstructured
	for _, res := range kustomize(t, filepath.Join(repoRoot(t), "config/policy-standalone")) {
		switch res.GetKind() {
		case "ValidatingAdmissionPolicy":
			policies[res.GetName()] = true
		case "ValidatingAdmissionPolicyBinding":
			bindings = append(bindings, res)
		default:
			t.Errorf("unexpected %s %s", res.GetKind(), res.GetName())
		}
	}
	if len(policies) == 0 || len(bindings) != len(policies) {
		t.Fatalf("%d policies and %d bindings, want one binding per policy", len(policies), len(bindings))
	}
	for _, b := range bindings {
		ref, _, _ := unstructured.NestedString(b.Object, "spec", "policyName")
		if !policies[ref] || ref != b.GetName() || !strings.HasPrefix(ref, "s3gw-remediation-") {
			t.Errorf("binding %s refers to %q; want its own, s3gw-remediation- prefixed policy", b.GetName(), ref)
		}
	}
}
