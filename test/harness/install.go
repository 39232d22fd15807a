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

package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/far"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// NodeHealthCheck's identity, as the NHC operator installs itself
// (internal/controller/rbac/aggregation.go in node-healthcheck-operator).
const (
	NHCNamespace        = "node-healthcheck-operator"
	NHCServiceAccount   = "node-healthcheck-controller-manager"
	nhcAggregationRole  = "node-healthcheck-operator-aggregation"
	nhcOwnRole          = "node-healthcheck-emulator"
	aggregateLabel      = "rbac.ext-remediation/aggregate-to-ext-remediation"
	extRemediationRBAC  = "config/rbac/external_remediation_clusterrole.yaml"
	operatorCRDs        = "config/crd/bases"
	medik8sCRDFixtures  = "test/crds/medik8s"
	aggregationDeadline = time.Minute
)

// Keys of unstructured objects, and our template kind.
const (
	fieldSpec    = "spec"
	templateKind = "S3GWRemediationTemplate"
)

// readVerbs are a reader's RBAC verbs.
var readVerbs = []string{"get", "list", "watch"}

// NHCUser is the user the NodeHealthCheck emulator acts as.
func NHCUser() string {
	return "system:serviceaccount:" + NHCNamespace + ":" + NHCServiceAccount
}

// install puts the operator's CRDs, the medik8s fixtures, NHC's RBAC and the
// harness namespaces into the cluster.
func (e *Env) install(ctx context.Context) error {
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	dirs := []string{operatorCRDs, medik8sCRDFixtures}
	if e.opts.InstallOperator != nil {
		dirs = []string{medik8sCRDFixtures}
	}
	var crds []*unstructured.Unstructured
	for _, dir := range dirs {
		objs, err := cluster.ReadManifests(filepath.Join(root, dir))
		if err != nil {
			return err
		}
		crds = append(crds, objs...)
	}
	for _, crd := range crds {
		if err := cluster.CreateIfAbsent(ctx, e.Client, crd); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		if err := cluster.WaitEstablished(ctx, e.Client, crd.GetName()); err != nil {
			return err
		}
	}
	if e.opts.InstallOperator != nil {
		if err := e.opts.InstallOperator(ctx, e.Cluster); err != nil {
			return fmt.Errorf("installing the operator: %w", err)
		}
	}
	for _, ns := range []string{TemplateNamespace, FARNamespace, NHCNamespace} {
		if err := e.ensureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	if err := e.warmUp(ctx); err != nil {
		return err
	}
	// FAR as it installs itself: its ServiceAccount, which the stand-in
	// acts as, its roles, and its ext-remediation role for NHC.
	if err := far.InstallRBAC(ctx, e.Client, FARNamespace, e.opts.FARSecrets.far()); err != nil {
		return err
	}
	return e.installNHCRBAC(ctx, filepath.Join(root, extRemediationRBAC))
}

// warmUp makes one dry-run create per new kind, so that kube-apiserver sets
// up each CRD's write path now rather than inside a timed failover.
func (e *Env) warmUp(ctx context.Context) error {
	kinds := []struct{ apiVersion, kind, namespace string }{
		{s3gwv1alpha1.GroupVersion.String(), "S3GWRemediation", TemplateNamespace},
		{s3gwv1alpha1.GroupVersion.String(), templateKind, TemplateNamespace},
		{FARAPIVersion, FARKind, FARNamespace},
		{nhc.NodeHealthCheckGVK.GroupVersion().String(), nhc.NodeHealthCheckGVK.Kind, ""},
	}
	for _, k := range kinds {
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		obj.SetAPIVersion(k.apiVersion)
		obj.SetKind(k.kind)
		obj.SetNamespace(k.namespace)
		obj.SetName("harness-warm-up")
		if k.kind == templateKind {
			obj.Object[fieldSpec] = map[string]any{"template": map[string]any{fieldSpec: map[string]any{}}}
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := e.Client.Create(ctx, obj, client.DryRunAll)
			if meta.IsNoMatchError(err) {
				return false, nil
			}
			return true, client.IgnoreAlreadyExists(err)
		})
		if err != nil {
			return fmt.Errorf("warming up %s: %w", k.kind, err)
		}
	}
	return nil
}

// installNHCRBAC sets up what the NHC operator sets up for itself: its
// service account, the aggregation ClusterRole that collects every
// ext-remediation role (the operator's included) and its binding, plus the
// rights NHC's own role gives it on nodes and leases.
func (e *Env) installNHCRBAC(ctx context.Context, extRolePath string) error {
	data, err := os.ReadFile(extRolePath)
	if err != nil {
		return fmt.Errorf("reading %s: %w", extRolePath, err)
	}
	extRole := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, extRole); err != nil {
		return fmt.Errorf("decoding %s: %w", extRolePath, err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: NHCServiceAccount, Namespace: NHCNamespace}}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: NHCNamespace, Name: NHCServiceAccount}},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: nhcAggregationRole},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
				{MatchLabels: map[string]string{aggregateLabel: "true"}},
			}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: nhcAggregationRole},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: nhcAggregationRole},
			Subjects:   subject,
		},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: nhcOwnRole},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: readVerbs},
				{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "create"}},
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: append(readVerbs, "create", "update", "patch", "delete")},
				{APIGroups: []string{nhc.NodeHealthCheckGVK.Group}, Resources: []string{"nodehealthchecks"}, Verbs: readVerbs},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: nhcOwnRole},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: nhcOwnRole},
			Subjects:   subject,
		},
	}
	if e.opts.InstallOperator == nil {
		// Otherwise the operator's install brings its own copy.
		objs = append(objs, extRole)
	}
	for _, obj := range objs {
		if err := cluster.CreateIfAbsent(ctx, e.Client, obj); err != nil {
			return err
		}
	}
	// kube-controller-manager's clusterrole-aggregation controller copies
	// the labelled roles' rules (ours and FAR's) into the aggregation role.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, aggregationDeadline, true, func(ctx context.Context) (bool, error) {
		var labelled rbacv1.ClusterRoleList
		if err := e.Client.List(ctx, &labelled, client.MatchingLabels{aggregateLabel: "true"}); err != nil {
			return false, err
		}
		want := 0
		for _, r := range labelled.Items {
			want += len(r.Rules)
		}
		var role rbacv1.ClusterRole
		if err := e.Client.Get(ctx, client.ObjectKey{Name: nhcAggregationRole}, &role); err != nil {
			return false, err
		}
		return len(role.Rules) >= want, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for ClusterRole %s to aggregate the ext-remediation roles: %w", nhcAggregationRole, err)
	}
	return nil
}

// ensureNamespace creates a namespace unless it exists, and waits for its
// default ServiceAccount (pods are rejected before it exists).
func (e *Env) ensureNamespace(ctx context.Context, name string) error {
	err := e.Client.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting Namespace %s: %w", name, err)
	}
	if err := e.Cluster.CreateNamespace(ctx, name); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
