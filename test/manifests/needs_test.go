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

package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// TestDescriptorNeedsAreGranted checks that the role generated from the
// +kubebuilder:rbac markers grants every right an evidence source's or a
// release strategy's adapter needs, and that the admission policy a write
// names in config/policy matches that write: a descriptor whose marker or
// policy is missing fails here, not in a cluster.
func TestDescriptorNeedsAreGranted(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config/rbac/role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		t.Fatal(err)
	}
	policies, err := testenv.ManagerPolicy()
	if err != nil {
		t.Fatal(err)
	}
	var needs []failover.Need
	for _, s := range evidence.Sources {
		needs = append(needs, s.Needs...)
	}
	for _, s := range release.Strategies {
		needs = append(needs, s.Needs...)
	}
	needs = append(needs, release.LonghornDetachNeeds...)
	for _, n := range needs {
		for _, verb := range n.Verbs {
			if !granted(role.Rules, n.Group, n.Resource, verb) {
				t.Errorf("config/rbac/role.yaml does not grant %s on %s in group %q: add a +kubebuilder:rbac marker", verb, n.Resource, n.Group)
			}
		}
		if n.Policy != "" && !admits(policies, n) {
			t.Errorf("%s has no ValidatingAdmissionPolicy %s matching %v on %s in group %q", testenv.PolicyDir, n.Policy, n.Verbs, n.Resource, n.Group)
		}
	}
}

func granted(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

// operations are the admission operations of the write verbs.
var operations = map[string]string{"create": "CREATE", "update": "UPDATE", "patch": "UPDATE", "delete": "DELETE"}

// admits reports whether the named policy matches every write of the need.
func admits(policies []*unstructured.Unstructured, n failover.Need) bool {
	for _, p := range policies {
		if p.GetKind() != "ValidatingAdmissionPolicy" || p.GetName() != n.Policy {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(p.Object, "spec", "matchConstraints", "resourceRules")
		for _, verb := range n.Verbs {
			op, write := operations[verb]
			if write && !slices.ContainsFunc(rules, func(r any) bool { return matches(r, n.Group, n.Resource, op) }) {
				return false
			}
		}
		return true
	}
	return false
}

func matches(rule any, group, resource, op string) bool {
	r, _ := rule.(map[string]any)
	has := func(field, value string) bool {
		values, _, _ := unstructured.NestedStringSlice(r, field)
		return slices.Contains(values, value) || slices.Contains(values, "*")
	}
	return has("apiGroups", group) && has("resources", resource) && has("operations", op) &&
		!strings.Contains(resource, "*")
}
