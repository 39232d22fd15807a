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

package olm

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func role(kind, name string, verb string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name},
		"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{verb}}},
	}}
}

func binding(kind, name, roleKind, roleName, sa string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": roleName},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": sa, "namespace": "system"}},
	}}
}

func TestRBACSplitsBetweenCSVAndManifests(t *testing.T) {
	in := &inputs{
		deployments: []*appsv1.Deployment{{
			ObjectMeta: metav1.ObjectMeta{Name: "manager", Namespace: "system"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				ServiceAccountName: "manager",
				Containers:         []corev1.Container{{Name: managerContainer, Image: "controller:latest"}},
			}}},
		}},
		roles: []*unstructured.Unstructured{role("Role", "leader-election", "create")},
		clusterRoles: []*unstructured.Unstructured{
			role("ClusterRole", "manager-role", "get"),
			role("ClusterRole", "namespaced-via-rolebinding", "list"),
			role("ClusterRole", "aggregated-for-nhc", "watch"),
			role("ClusterRole", "bound-to-someone-else", "delete"),
		},
		roleBindings: []*unstructured.Unstructured{
			binding("RoleBinding", "leader-election", "Role", "leader-election", "manager"),
			binding("RoleBinding", "namespaced", "ClusterRole", "namespaced-via-rolebinding", "manager"),
		},
		clusterRoleBindings: []*unstructured.Unstructured{
			binding("ClusterRoleBinding", "manager", "ClusterRole", "manager-role", "manager"),
			binding("ClusterRoleBinding", "other", "ClusterRole", "bound-to-someone-else", "prometheus"),
		},
		serviceAccounts: []*unstructured.Unstructured{
			{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "manager"}}},
		},
	}

	strategy, err := installStrategy(in, "example.com/manager:v1")
	if err != nil {
		t.Fatal(err)
	}
	spec := strategy.StrategySpec
	if got := spec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image; got != "example.com/manager:v1" {
		t.Errorf("manager image is %q", got)
	}
	var namespaced, cluster []string
	for _, p := range spec.Permissions {
		for _, r := range p.Rules {
			namespaced = append(namespaced, r.Verbs...)
		}
	}
	for _, p := range spec.ClusterPermissions {
		for _, r := range p.Rules {
			cluster = append(cluster, r.Verbs...)
		}
	}
	if !slices.Equal(namespaced, []string{"create", "list"}) {
		t.Errorf("permissions grant %v, want the Role's and the RoleBinding-bound ClusterRole's", namespaced)
	}
	if !slices.Equal(cluster, []string{"get"}) {
		t.Errorf("clusterPermissions grant %v, want manager-role's only", cluster)
	}

	objs := manifestObjects(in)
	shipped := make([]string, 0, len(objs))
	for _, u := range objs {
		shipped = append(shipped, u.GetKind()+"/"+u.GetName())
	}
	want := []string{"ClusterRole/aggregated-for-nhc", "ClusterRole/bound-to-someone-else", "ClusterRoleBinding/other"}
	if !slices.Equal(shipped, want) {
		t.Errorf("bundle manifests are %v, want %v", shipped, want)
	}
}

func TestInstallStrategyNeedsTheManagerAndItsRoles(t *testing.T) {
	deployment := func(container, sa string) []*appsv1.Deployment {
		return []*appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Namespace: "system"}, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			ServiceAccountName: sa, Containers: []corev1.Container{{Name: container}},
		}}}}}
	}
	for name, in := range map[string]*inputs{
		"no manager container":   {deployments: deployment("sidecar", "manager")},
		"no service account":     {deployments: deployment(managerContainer, "")},
		"binding to a lost role": {deployments: deployment(managerContainer, "manager"), clusterRoleBindings: []*unstructured.Unstructured{binding("ClusterRoleBinding", "b", "ClusterRole", "gone", "manager")}},
	} {
		if _, err := installStrategy(in, "img"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestDefaultBundleImage(t *testing.T) {
	for containerImage, want := range map[string]string{
		"quay.io/s3gw-tech/s3gw-remediation:v0.1.0":     "quay.io/s3gw-tech/s3gw-remediation-bundle:v0.1.0",
		"localhost:5000/s3gw-remediation:dev":           "localhost:5000/s3gw-remediation-bundle:v0.1.0",
		"localhost:5000/s3gw-remediation":               "localhost:5000/s3gw-remediation-bundle:v0.1.0",
		"quay.io/x/s3gw-remediation:v0.1.0@sha256:abcd": "quay.io/x/s3gw-remediation-bundle:v0.1.0",
	} {
		got, err := defaultBundleImage(containerImage, "0.1.0")
		if err != nil || got != want {
			t.Errorf("defaultBundleImage(%q) = %q, %v; want %q", containerImage, got, err, want)
		}
	}
}
