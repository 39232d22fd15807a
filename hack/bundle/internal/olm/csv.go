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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// managerContainer is the container whose image is set to the --image flag.
const managerContainer = "manager"

// buildCSV completes the CSV base with what is derived from the rendered
// objects and the options.
func buildCSV(in *inputs, opts BundleOptions, description string, icon []byte) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	csv := in.csvBase.DeepCopy()
	csv.Name = PackageName + ".v" + opts.Version
	csv.Spec.Version = version.OperatorVersion{Version: semver.MustParse(opts.Version)}
	csv.Spec.Description = strings.TrimSpace(description) + "\n"
	csv.Spec.Icon = []operatorsv1alpha1.Icon{{
		Data:      base64.StdEncoding.EncodeToString(icon),
		MediaType: "image/svg+xml",
	}}

	strategy, err := installStrategy(in, opts.Image)
	if err != nil {
		return nil, err
	}
	csv.Spec.InstallStrategy = strategy
	webhooks, err := webhookDefinitions(in, in.deployments[0].Name)
	if err != nil {
		return nil, err
	}
	csv.Spec.WebhookDefinitions = webhooks

	if err := checkOwnedCRDs(csv, in.crds); err != nil {
		return nil, err
	}
	examples, err := almExamples(in.examples)
	if err != nil {
		return nil, err
	}

	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	csv.Annotations["alm-examples"] = examples
	csv.Annotations["containerImage"] = opts.Image
	// Any earlier version upgrades straight to this one; the previous
	// release is the one it replaces in the channel.
	csv.Annotations["olm.skipRange"] = "<" + opts.Version
	if opts.Replaces != "" {
		csv.Spec.Replaces = PackageName + ".v" + opts.Replaces
	}
	if opts.CreatedAt != "" {
		csv.Annotations["createdAt"] = opts.CreatedAt
	}
	if csv.Annotations["createdAt"] == "" {
		return nil, fmt.Errorf("no createdAt: set it in the CSV base or pass one")
	}
	return csv, nil
}

// installStrategy turns the Deployment and the RBAC bound to its
// ServiceAccount into the CSV's deployment install strategy, as
// operator-sdk does: Roles become permissions, ClusterRoles
// clusterPermissions, and OLM creates the ServiceAccount and bindings.
func installStrategy(in *inputs, image string) (operatorsv1alpha1.NamedInstallStrategy, error) {
	d := in.deployments[0]
	spec := *d.Spec.DeepCopy()
	found := false
	for i := range spec.Template.Spec.Containers {
		if spec.Template.Spec.Containers[i].Name == managerContainer {
			spec.Template.Spec.Containers[i].Image = image
			found = true
		}
	}
	if !found {
		return operatorsv1alpha1.NamedInstallStrategy{}, fmt.Errorf("deployment %s has no container %q", d.Name, managerContainer)
	}
	sa := spec.Template.Spec.ServiceAccountName
	if sa == "" {
		return operatorsv1alpha1.NamedInstallStrategy{}, fmt.Errorf("deployment %s sets no serviceAccountName", d.Name)
	}

	rules, err := boundRules(in, sa, d.Namespace)
	if err != nil {
		return operatorsv1alpha1.NamedInstallStrategy{}, err
	}
	strategy := operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
		StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{
			DeploymentSpecs: []operatorsv1alpha1.StrategyDeploymentSpec{{
				Name:  d.Name,
				Label: withoutKustomizeLabel(d.Labels),
				Spec:  spec,
			}},
		},
	}
	if len(rules.namespaced) > 0 {
		strategy.StrategySpec.Permissions = []operatorsv1alpha1.StrategyDeploymentPermissions{{
			ServiceAccountName: sa, Rules: rules.namespaced,
		}}
	}
	if len(rules.cluster) > 0 {
		strategy.StrategySpec.ClusterPermissions = []operatorsv1alpha1.StrategyDeploymentPermissions{{
			ServiceAccountName: sa, Rules: rules.cluster,
		}}
	}
	return strategy, nil
}

type saRules struct {
	namespaced, cluster []rbacv1.PolicyRule
	// used names the roles, cluster roles and bindings that went into the
	// CSV, by kind and name.
	used map[string]bool
}

func usedKey(kind, name string) string { return kind + "/" + name }

// boundRules collects the rules of every Role and ClusterRole bound to the
// ServiceAccount, in binding order. A binding of our ServiceAccount to a
// role that is not in config/ is an error: OLM would grant nothing.
func boundRules(in *inputs, sa, namespace string) (saRules, error) {
	out := saRules{used: map[string]bool{}}
	bindings := append(append([]*unstructured.Unstructured(nil), in.roleBindings...), in.clusterRoleBindings...)
	for _, u := range bindings {
		var b rbacv1.RoleBinding // RoleBinding and ClusterRoleBinding share subjects and roleRef
		if err := fromUnstructured(u, &b); err != nil {
			return out, err
		}
		if !bindsServiceAccount(b.Subjects, sa, namespace) {
			continue
		}
		pool := in.roles
		if b.RoleRef.Kind == "ClusterRole" {
			pool = in.clusterRoles
		}
		rules, err := rulesOf(pool, b.RoleRef.Name)
		if err != nil {
			return out, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		// A ClusterRole bound by a RoleBinding grants namespaced rights.
		if u.GetKind() == "ClusterRoleBinding" {
			out.cluster = append(out.cluster, rules...)
		} else {
			out.namespaced = append(out.namespaced, rules...)
		}
		out.used[usedKey(u.GetKind(), u.GetName())] = true
		out.used[usedKey(b.RoleRef.Kind, b.RoleRef.Name)] = true
	}
	return out, nil
}

func bindsServiceAccount(subjects []rbacv1.Subject, sa, namespace string) bool {
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && (s.Namespace == "" || s.Namespace == namespace) {
			return true
		}
	}
	return false
}

func rulesOf(pool []*unstructured.Unstructured, name string) ([]rbacv1.PolicyRule, error) {
	for _, u := range pool {
		if u.GetName() != name {
			continue
		}
		var role rbacv1.ClusterRole // Role and ClusterRole share the rules field
		if err := fromUnstructured(u, &role); err != nil {
			return nil, err
		}
		return role.Rules, nil
	}
	return nil, fmt.Errorf("role %s is not in config/", name)
}

// manifestObjects are the objects shipped in bundle/manifests besides the
// CSV and CRDs: roles not bound to the manager (NodeHealthCheck's
// aggregated ClusterRole, the metrics reader), ServiceAccounts other than
// the manager's, and Services. OLM creates the manager's ServiceAccount and
// the bindings of its roles from the install strategy.
func manifestObjects(in *inputs) []*unstructured.Unstructured {
	d := in.deployments[0]
	sa := d.Spec.Template.Spec.ServiceAccountName
	rules, _ := boundRules(in, sa, d.Namespace) // errors surfaced by installStrategy

	var out []*unstructured.Unstructured
	for _, group := range [][]*unstructured.Unstructured{
		in.roles, in.clusterRoles, in.roleBindings, in.clusterRoleBindings,
	} {
		for _, u := range group {
			if !rules.used[usedKey(u.GetKind(), u.GetName())] {
				out = append(out, u)
			}
		}
	}
	for _, u := range in.serviceAccounts {
		if u.GetName() != sa {
			out = append(out, u)
		}
	}
	for _, u := range in.others {
		if !isWebhookService(in, u) {
			out = append(out, u)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// checkOwnedCRDs makes sure the CSV base describes exactly the CRDs that are
// shipped, by name, kind and a served version.
func checkOwnedCRDs(csv *operatorsv1alpha1.ClusterServiceVersion, crds []*unstructured.Unstructured) error {
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, u := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := fromUnstructured(u, crd); err != nil {
			return err
		}
		byName[crd.Name] = crd
	}
	seen := map[string]bool{}
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		crd, ok := byName[owned.Name]
		if !ok {
			return fmt.Errorf("CSV base owns %s, which config/crd does not define", owned.Name)
		}
		if owned.Kind != crd.Spec.Names.Kind {
			return fmt.Errorf("CSV base says %s has kind %s, the CRD says %s", owned.Name, owned.Kind, crd.Spec.Names.Kind)
		}
		served := false
		for _, v := range crd.Spec.Versions {
			served = served || (v.Name == owned.Version && v.Served)
		}
		if !served {
			return fmt.Errorf("CSV base describes %s version %q, which the CRD does not serve", owned.Name, owned.Version)
		}
		if owned.DisplayName == "" || owned.Description == "" {
			return fmt.Errorf("CSV base: %s needs a displayName and a description", owned.Name)
		}
		seen[owned.Name] = true
	}
	for name := range byName {
		if !seen[name] {
			return fmt.Errorf("CRD %s is not described under spec.customresourcedefinitions.owned in the CSV base", name)
		}
	}
	return nil
}

// almExamples renders the samples of owned kinds as the alm-examples JSON,
// sorted by kind and name. Namespaces are dropped: the console creates an
// example in the namespace being viewed.
func almExamples(samples []*unstructured.Unstructured) (string, error) {
	if len(samples) == 0 {
		return "", fmt.Errorf("no samples of the owned kinds: alm-examples would be empty")
	}
	examples := make([]map[string]any, 0, len(samples))
	sorted := append([]*unstructured.Unstructured(nil), samples...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].GetKind() != sorted[j].GetKind() {
			return sorted[i].GetKind() < sorted[j].GetKind()
		}
		return sorted[i].GetName() < sorted[j].GetName()
	})
	for _, s := range sorted {
		s = s.DeepCopy()
		s.SetNamespace("")
		examples = append(examples, s.Object)
	}
	out, err := json.MarshalIndent(examples, "", "  ")
	if err != nil {
		return "", err
	}
	return string(out), nil
}
