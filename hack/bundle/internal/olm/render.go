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
	"fmt"
	"path/filepath"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// skippedKinds are rendered by config/manifests but belong in no bundle:
// OLM creates the install namespace, and the NodeHealthCheck sample is for
// users (it becomes the example in the description and docs/install.md).
var skippedKinds = map[schema.GroupKind]bool{
	{Group: "", Kind: "Namespace"}:                             true,
	{Group: "remediation.medik8s.io", Kind: "NodeHealthCheck"}: true,
}

// monitoringGroup is the Prometheus Operator's API group.
const monitoringGroup = "monitoring.coreos.com"

// inputs are the objects config/manifests renders to, sorted by role.
type inputs struct {
	csvBase             *operatorsv1alpha1.ClusterServiceVersion
	crds                []*unstructured.Unstructured
	deployments         []*appsv1.Deployment
	serviceAccounts     []*unstructured.Unstructured
	roles               []*unstructured.Unstructured
	clusterRoles        []*unstructured.Unstructured
	roleBindings        []*unstructured.Unstructured
	clusterRoleBindings []*unstructured.Unstructured
	// others go to bundle/manifests as they are (Services, the
	// PodDisruptionBudget, the ServiceMonitor, its token Secret and the
	// PrometheusRule: kinds OLM's InstallPlan creates), except the webhook
	// Service.
	others []*unstructured.Unstructured
	// mutatingWebhooks become the CSV's webhookdefinitions.
	mutatingWebhooks []*unstructured.Unstructured
	examples         []*unstructured.Unstructured
	scorecard        *unstructured.Unstructured
}

// render builds the kustomization in dir (config/manifests) and sorts the
// objects. Every kind must be known: an unexpected one is an error, not
// something silently shipped or dropped.
func render(dir string) (*inputs, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", dir, err)
	}

	objs := make([]*unstructured.Unstructured, 0, resMap.Size())
	crdGroups := map[string]bool{}
	for _, res := range resMap.Resources() {
		// Through JSON, so numbers are int64/float64 as in any unstructured.
		raw, err := res.MarshalJSON()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		objs = append(objs, u)
		m := u.Object
		if u.GroupVersionKind() == apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
			group, _, _ := unstructured.NestedString(m, "spec", "group")
			crdGroups[group] = true
		}
	}

	in := &inputs{}
	for _, u := range objs {
		if err := in.add(u, crdGroups); err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	if in.csvBase == nil {
		return nil, fmt.Errorf("%s renders no ClusterServiceVersion base", filepath.Base(dir))
	}
	if len(in.deployments) != 1 {
		return nil, fmt.Errorf("%s renders %d Deployments, want 1", filepath.Base(dir), len(in.deployments))
	}
	if in.scorecard == nil {
		return nil, fmt.Errorf("%s renders no scorecard Configuration", filepath.Base(dir))
	}
	return in, nil
}

func (in *inputs) add(u *unstructured.Unstructured, crdGroups map[string]bool) error {
	gvk := u.GroupVersionKind()
	if skippedKinds[gvk.GroupKind()] {
		return nil
	}
	if crdGroups[gvk.Group] {
		in.examples = append(in.examples, u)
		return nil
	}
	switch gvk.GroupKind() {
	case schema.GroupKind{Group: operatorsv1alpha1.GroupName, Kind: operatorsv1alpha1.ClusterServiceVersionKind}:
		if in.csvBase != nil {
			return fmt.Errorf("a second ClusterServiceVersion base")
		}
		in.csvBase = &operatorsv1alpha1.ClusterServiceVersion{}
		return fromUnstructured(u, in.csvBase)
	case schema.GroupKind{Group: apiextensionsv1.GroupName, Kind: "CustomResourceDefinition"}:
		in.crds = append(in.crds, u)
	case schema.GroupKind{Group: appsv1.GroupName, Kind: "Deployment"}:
		d := &appsv1.Deployment{}
		in.deployments = append(in.deployments, d)
		return fromUnstructured(u, d)
	case schema.GroupKind{Group: corev1.GroupName, Kind: "ServiceAccount"}:
		in.serviceAccounts = append(in.serviceAccounts, u)
	case schema.GroupKind{Group: rbacv1.GroupName, Kind: "Role"}:
		in.roles = append(in.roles, u)
	case schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRole"}:
		in.clusterRoles = append(in.clusterRoles, u)
	case schema.GroupKind{Group: rbacv1.GroupName, Kind: "RoleBinding"}:
		in.roleBindings = append(in.roleBindings, u)
	case schema.GroupKind{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}:
		in.clusterRoleBindings = append(in.clusterRoleBindings, u)
	case schema.GroupKind{Group: corev1.GroupName, Kind: serviceKind},
		// The ServiceMonitor's scrape token (config/prometheus).
		schema.GroupKind{Group: corev1.GroupName, Kind: "Secret"},
		schema.GroupKind{Group: policyv1.GroupName, Kind: "PodDisruptionBudget"},
		schema.GroupKind{Group: monitoringGroup, Kind: "ServiceMonitor"},
		schema.GroupKind{Group: monitoringGroup, Kind: "PrometheusRule"}:
		in.others = append(in.others, u)
	case schema.GroupKind{Group: admissionregistrationv1.GroupName, Kind: "MutatingWebhookConfiguration"}:
		in.mutatingWebhooks = append(in.mutatingWebhooks, u)
	case schema.GroupKind{Group: "scorecard.operatorframework.io", Kind: "Configuration"}:
		in.scorecard = u
	default:
		return fmt.Errorf("unexpected kind %s in config/manifests: add it to the bundle or to skippedKinds", gvk)
	}
	return nil
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true)
}
