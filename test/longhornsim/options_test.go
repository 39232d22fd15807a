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

package longhornsim

import (
	"strings"
	"testing"
)

func TestDescribeNamesPolicyScope(t *testing.T) {
	scoped := Options{NodeDownPodDeletionPolicy: PolicyDeleteDeploymentPod, NodeDownPodDeletionPolicyNamespaces: []string{"a", "b"}}
	if got, want := scoped.Describe(), "node-down-pod-deletion-policy=delete-deployment-pod(namespaces a,b)"; !strings.Contains(got, want) {
		t.Errorf("Describe() = %q, want it to contain %q", got, want)
	}
	if got := (Options{NodeDownPodDeletionPolicy: PolicyDeleteDeploymentPod}).Describe(); strings.Contains(got, "namespaces") {
		t.Errorf("Describe() = %q, want no namespace scope for a cluster-wide policy", got)
	}
}

func TestPolicyScope(t *testing.T) {
	everywhere := &podDeletionPolicyReconciler{}
	scoped := &podDeletionPolicyReconciler{namespaces: []string{"bench-longhorn-policy"}}
	for _, tc := range []struct {
		r         *podDeletionPolicyReconciler
		namespace string
		want      bool
	}{
		{everywhere, "s3gw", true},
		{scoped, "bench-longhorn-policy", true},
		{scoped, "s3gw", false},
	} {
		if got := tc.r.inScope(tc.namespace); got != tc.want {
			t.Errorf("inScope(%q) with namespaces %v = %v, want %v", tc.namespace, tc.r.namespaces, got, tc.want)
		}
	}
}
