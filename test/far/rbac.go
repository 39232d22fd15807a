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

package far

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FAR's identity and RBAC as its kustomize tree installs them
// (config/default namePrefix fence-agents-remediation-, config/rbac).
const (
	ServiceAccount  = "fence-agents-remediation-controller-manager"
	managerRole     = "fence-agents-remediation-manager-role"
	extRemediation  = "fence-agents-remediation-ext-remediation"
	aggregateToNHC  = "rbac.ext-remediation/aggregate-to-ext-remediation"
	farGroup        = "fence-agents-remediation.medik8s.io"
	secretsRoleName = managerRole
)

// SecretAccess is where FAR may read Secrets.
type SecretAccess int

const (
	// SecretsInFARNamespace is FAR's own RBAC: the marker
	// `resources=secrets,...,namespace=system` becomes a Role in FAR's
	// namespace (config/rbac/role.yaml), as `make deploy` installs it.
	SecretsInFARNamespace SecretAccess = iota
	// SecretsClusterWide is FAR installed by OLM: its CSV supports only the
	// AllNamespaces install mode, and OLM lifts an AllNamespaces operator's
	// Roles to ClusterRoles (operator-lifecycle-manager,
	// pkg/controller/operators/olm/operatorgroup.go, ensureSingletonRBAC).
	SecretsClusterWide
)

// User is FAR's ServiceAccount as a user name.
func User(namespace string) string {
	return "system:serviceaccount:" + namespace + ":" + ServiceAccount
}

// Impersonate returns a copy of cfg that acts as FAR's ServiceAccount.
func Impersonate(cfg *rest.Config, namespace string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: User(namespace)}
	return cfg
}

// InstallRBAC installs, in the namespace FAR runs in, its ServiceAccount,
// its ClusterRole and the Role for Secrets (lifted to the cluster with
// SecretsClusterWide), and its ext-remediation ClusterRole that NHC
// aggregates. It is idempotent.
func InstallRBAC(ctx context.Context, admin client.Client, namespace string, secrets SecretAccess) error {
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccount, Namespace: namespace}}
	secretRule := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: readVerbs}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: ServiceAccount}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: managerRole}, Rules: managerRules()},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: managerRole},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerRole}, Subjects: subjects},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: secretsRoleName}, Rules: []rbacv1.PolicyRule{secretRule}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: secretsRoleName},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: secretsRoleName}, Subjects: subjects},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: extRemediation, Labels: map[string]string{aggregateToNHC: "true"}},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{farGroup}, Resources: []string{"fenceagentsremediationtemplates"}, Verbs: readVerbs},
				{APIGroups: []string{farGroup}, Resources: []string{"fenceagentsremediations"}, Verbs: slices.Concat(readVerbs, writeVerbs)},
			},
		},
	}
	if secrets == SecretsClusterWide {
		lifted := "olm-lifted-" + secretsRoleName
		objs = append(objs,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: lifted}, Rules: []rbacv1.PolicyRule{secretRule,
				{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: readVerbs}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: lifted},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: lifted}, Subjects: subjects})
	}
	for _, obj := range objs {
		if err := admin.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// Verbs of the rules.
const (
	verbUpdate = "update"
	verbDelete = "delete"
)

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"create", verbUpdate, "patch", verbDelete}
)

// managerRules are config/rbac/role.yaml's ClusterRole rules.
func managerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: readVerbs},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: slices.Concat(readVerbs, []string{verbUpdate, verbDelete})},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: slices.Concat(readVerbs, []string{verbUpdate, verbDelete, "deletecollection"})},
		{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}},
		{APIGroups: []string{farGroup}, Resources: []string{"fenceagentsremediations", "fenceagentsremediationtemplates"},
			Verbs: slices.Concat(readVerbs, writeVerbs)},
		{APIGroups: []string{farGroup}, Resources: []string{"fenceagentsremediations/finalizers", "fenceagentsremediationtemplates/finalizers"},
			Verbs: []string{verbUpdate}},
		{APIGroups: []string{farGroup}, Resources: []string{"fenceagentsremediations/status", "fenceagentsremediationtemplates/status"},
			Verbs: []string{"get", "patch", verbUpdate}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: slices.Concat(readVerbs, []string{verbDelete})},
	}
}
