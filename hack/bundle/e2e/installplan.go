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

package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Labels OLM v0 puts on what it installs (operator-lifecycle-manager
// pkg/controller/install, pkg/lib/ownerutil, pkg/controller/registry/resolver).
const (
	OLMManagedLabel      = "olm.managed"
	OwnerLabel           = "olm.owner"
	OwnerNamespaceLabel  = "olm.owner.namespace"
	OwnerKindLabel       = "olm.owner.kind"
	PermissionsHashLabel = "olm.permissions.hash"
	CopiedFromLabel      = operatorsv1alpha1.CopiedLabelKey
)

// Kinds of the objects OLM creates for a CSV's permissions.
const (
	kindServiceAccount     = "ServiceAccount"
	kindRole               = "Role"
	kindRoleBinding        = "RoleBinding"
	kindClusterRole        = "ClusterRole"
	kindClusterRoleBinding = "ClusterRoleBinding"
)

// Bundle is a registry+v1 bundle's manifests/ directory.
type Bundle struct {
	CSV  *operatorsv1alpha1.ClusterServiceVersion
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Objects are the other manifests (Services, ClusterRoles, ...), in
	// file name order.
	Objects []*unstructured.Unstructured
}

// ReadBundle reads a bundle's manifests directory: one object per file, as
// the registry+v1 format requires.
func ReadBundle(manifestsDir string) (*Bundle, error) {
	entries, err := os.ReadDir(manifestsDir)
	if err != nil {
		return nil, err
	}
	b := &Bundle{}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		path := filepath.Join(manifestsDir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		switch obj.GroupVersionKind() {
		case operatorsv1alpha1.SchemeGroupVersion.WithKind(operatorsv1alpha1.ClusterServiceVersionKind):
			if b.CSV != nil {
				return nil, fmt.Errorf("%s: a second ClusterServiceVersion in the bundle", path)
			}
			b.CSV = &operatorsv1alpha1.ClusterServiceVersion{}
			if err := yaml.UnmarshalStrict(data, b.CSV); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		case apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"):
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(data, crd); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			b.CRDs = append(b.CRDs, crd)
		default:
			b.Objects = append(b.Objects, obj)
		}
	}
	if b.CSV == nil {
		return nil, fmt.Errorf("no ClusterServiceVersion in %s", manifestsDir)
	}
	return b, nil
}

// CRDsForInstall returns the CRDs as the catalog operator creates them: with
// the olm.managed label, which OLM's CRD informers select on.
func (b *Bundle) CRDsForInstall() []*apiextensionsv1.CustomResourceDefinition {
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(b.CRDs))
	for _, crd := range b.CRDs {
		crd = crd.DeepCopy()
		crd.Labels = withLabel(crd.Labels, OLMManagedLabel, "true")
		out = append(out, crd)
	}
	return out
}

// CSVForInstall returns the CSV as the catalog operator creates it in
// namespace: namespace set, olm.managed label added.
func (b *Bundle) CSVForInstall(namespace string) *operatorsv1alpha1.ClusterServiceVersion {
	csv := b.CSV.DeepCopy()
	csv.Namespace = namespace
	csv.Labels = withLabel(csv.Labels, OLMManagedLabel, "true")
	return csv
}

// installPlanKinds are the kinds, besides CRDs and the CSV, that the
// catalog operator of OLM v0.38 can create from an InstallPlan step
// (pkg/controller/operators/catalog: ExecutePlan's explicit cases and
// supportedresources.go). A bundle manifest of any other kind fails the
// InstallPlan with UnsupportedResource.
var installPlanKinds = map[string]bool{
	kindClusterRole: true, kindClusterRoleBinding: true, kindRole: true, kindRoleBinding: true,
	kindServiceAccount: true, "Service": true, "ConfigMap": true, "Secret": true,
	"PrometheusRule": true, "ServiceMonitor": true, "PodDisruptionBudget": true,
	"PriorityClass": true, "VerticalPodAutoscaler": true, "ConsoleYAMLSample": true,
	"ConsoleQuickStart": true, "ConsoleCLIDownload": true, "ConsoleLink": true,
	"ConsolePlugin": true, "NetworkPolicy": true,
}

// keptAsIs are the kinds ExecutePlan creates as they are in the bundle,
// adding only olm.managed; the others get an owner reference to the CSV
// (namespaced kinds) or the olm.owner labels (cluster-scoped kinds).
var keptAsIs = map[string]bool{kindClusterRole: true, kindClusterRoleBinding: true}

// InstallPlanObjects returns what the catalog operator creates for the
// bundle once the CSV (which must carry its UID, so: read back after
// creation) exists, in the InstallPlan's order: the bundle's other
// manifests, then the ServiceAccount and RBAC of the CSV's permissions
// (resolver.RBACForClusterServiceVersion). namespaced says whether a kind
// is namespaced (a RESTMapper's answer).
func (b *Bundle) InstallPlanObjects(csv *operatorsv1alpha1.ClusterServiceVersion, namespaced func(schema.GroupVersionKind) (bool, error)) ([]client.Object, error) {
	if csv.UID == "" || csv.Namespace == "" {
		return nil, fmt.Errorf("CSV %s has no UID or namespace: pass the CSV read back from the cluster", csv.Name)
	}
	var out []client.Object
	for _, obj := range b.Objects {
		gvk := obj.GroupVersionKind()
		if !installPlanKinds[gvk.Kind] {
			return nil, fmt.Errorf("bundle manifest %s %s: OLM's InstallPlan does not create kind %s (UnsupportedResource)", gvk.Kind, obj.GetName(), gvk.Kind)
		}
		obj = obj.DeepCopy()
		isNamespaced, err := namespaced(gvk)
		if err != nil {
			return nil, fmt.Errorf("bundle manifest %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		switch {
		case keptAsIs[gvk.Kind]:
		case isNamespaced:
			obj.SetOwnerReferences(append(obj.GetOwnerReferences(), nonBlockingOwner(csv)))
		default:
			obj.SetLabels(withOwnerLabels(obj.GetLabels(), csv))
		}
		if isNamespaced {
			obj.SetNamespace(csv.Namespace)
		}
		obj.SetLabels(withLabel(obj.GetLabels(), OLMManagedLabel, "true"))
		out = append(out, obj)
	}
	rbac, err := PermissionObjects(csv)
	if err != nil {
		return nil, err
	}
	return append(out, rbac...), nil
}

// PermissionObjects is resolver.RBACForClusterServiceVersion of OLM v0.38,
// with the olm.managed label ExecutePlan adds: per service account of the
// CSV's install strategy, the ServiceAccount, a Role and RoleBinding per
// permissions entry, and a ClusterRole and ClusterRoleBinding per
// clusterPermissions entry, named and labelled as OLM names and labels
// them (the olm.permissions.hash label is how OLM finds them again).
func PermissionObjects(csv *operatorsv1alpha1.ClusterServiceVersion) ([]client.Object, error) {
	strategy := csv.Spec.InstallStrategy
	if strategy.StrategyName != operatorsv1alpha1.InstallStrategyNameDeployment {
		return nil, fmt.Errorf("CSV %s: install strategy %q, want %q", csv.Name, strategy.StrategyName, operatorsv1alpha1.InstallStrategyNameDeployment)
	}
	type perSA struct {
		sa       *corev1.ServiceAccount
		rbac     []client.Object
		position int
	}
	bySA := map[string]*perSA{}
	serviceAccount := func(name string) *perSA {
		if p, ok := bySA[name]; ok {
			return p
		}
		p := &perSA{position: len(bySA), sa: &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       csv.Namespace,
			OwnerReferences: []metav1.OwnerReference{nonBlockingOwner(csv)},
			Labels:          map[string]string{OLMManagedLabel: "true"},
		}}}
		bySA[name] = p
		return p
	}
	subject := func(sa string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: csv.Namespace}}
	}

	for _, perm := range strategy.StrategySpec.Permissions {
		p := serviceAccount(perm.ServiceAccountName)
		name, err := generateName(csv.Name+"-"+perm.ServiceAccountName, struct {
			Name       string                                          `json:"name,omitempty"`
			Permission operatorsv1alpha1.StrategyDeploymentPermissions `json:"permission"`
		}{Name: csv.Name, Permission: perm})
		if err != nil {
			return nil, err
		}
		ruleHash, err := policyRuleHash(perm.Rules)
		if err != nil {
			return nil, err
		}
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: csv.Namespace,
				OwnerReferences: []metav1.OwnerReference{nonBlockingOwner(csv)},
				Labels:          withLabel(withOwnerLabels(nil, csv), PermissionsHashLabel, ruleHash),
			},
			Rules: perm.Rules,
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: csv.Namespace,
				OwnerReferences: []metav1.OwnerReference{nonBlockingOwner(csv)},
			},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kindRole, Name: name},
			Subjects: subject(perm.ServiceAccountName),
		}
		bindingHash, err := bindingHash(binding.RoleRef, binding.Subjects)
		if err != nil {
			return nil, err
		}
		binding.Labels = withLabel(withOwnerLabels(nil, csv), PermissionsHashLabel, bindingHash)
		p.rbac = append(p.rbac, role, binding)
	}
	for _, perm := range strategy.StrategySpec.ClusterPermissions {
		p := serviceAccount(perm.ServiceAccountName)
		name, err := generateName(csv.Name, struct {
			Name       string                                          `json:"name,omitempty"`
			Namespace  string                                          `json:"namespace,omitempty"`
			Permission operatorsv1alpha1.StrategyDeploymentPermissions `json:"permission"`
		}{Name: csv.Name, Namespace: csv.Namespace, Permission: perm})
		if err != nil {
			return nil, err
		}
		ruleHash, err := policyRuleHash(perm.Rules)
		if err != nil {
			return nil, err
		}
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{
				Name:   name,
				Labels: withLabel(withOwnerLabels(nil, csv), PermissionsHashLabel, ruleHash),
			},
			Rules: perm.Rules,
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kindClusterRole, Name: name},
			Subjects:   subject(perm.ServiceAccountName),
		}
		bindingHash, err := bindingHash(binding.RoleRef, binding.Subjects)
		if err != nil {
			return nil, err
		}
		binding.Labels = withLabel(withOwnerLabels(nil, csv), PermissionsHashLabel, bindingHash)
		p.rbac = append(p.rbac, role, binding)
	}

	// The InstallPlan lists per service account: the account, then its
	// Roles, RoleBindings, ClusterRoles, ClusterRoleBindings.
	sas := make([]*perSA, 0, len(bySA))
	for _, p := range bySA {
		sas = append(sas, p)
	}
	sort.Slice(sas, func(i, j int) bool { return sas[i].position < sas[j].position })
	var out []client.Object
	for _, p := range sas {
		// A permission for "default" uses the namespace's own account.
		if p.sa.Name != "default" {
			out = append(out, p.sa)
		}
		sort.SliceStable(p.rbac, func(i, j int) bool { return rbacOrder(p.rbac[i]) < rbacOrder(p.rbac[j]) })
		for _, o := range p.rbac {
			o.SetLabels(withLabel(o.GetLabels(), OLMManagedLabel, "true"))
			out = append(out, o)
		}
	}
	return out, nil
}

func rbacOrder(o client.Object) int {
	switch o.(type) {
	case *rbacv1.Role:
		return 0
	case *rbacv1.RoleBinding:
		return 1
	case *rbacv1.ClusterRole:
		return 2
	default:
		return 3
	}
}

// nonBlockingOwner is ownerutil.NonBlockingOwner: an owner reference to the
// CSV that is neither a controller nor blocks deletion.
func nonBlockingOwner(csv *operatorsv1alpha1.ClusterServiceVersion) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         operatorsv1alpha1.SchemeGroupVersion.String(),
		Kind:               operatorsv1alpha1.ClusterServiceVersionKind,
		Name:               csv.Name,
		UID:                csv.UID,
		BlockOwnerDeletion: ptr.To(false),
		Controller:         ptr.To(false),
	}
}

// withOwnerLabels adds ownerutil.OwnerLabel: how OLM marks cluster-scoped
// objects that belong to a namespaced CSV.
func withOwnerLabels(labels map[string]string, csv *operatorsv1alpha1.ClusterServiceVersion) map[string]string {
	labels = withLabel(labels, OwnerLabel, csv.Name)
	labels = withLabel(labels, OwnerNamespaceLabel, csv.Namespace)
	return withLabel(labels, OwnerKindLabel, operatorsv1alpha1.ClusterServiceVersionKind)
}

func withLabel(labels map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[key] = value
	return out
}

// generateName is resolver.generateName: base, a dash and
// hash.DeepHashObject(o) (base62 of the SHA-224 of o's JSON encoding), the
// base cut so that the name fits in 63 characters.
func generateName(base string, o any) (string, error) {
	const maxNameLength = 63
	hasher := sha256.New224()
	if err := json.NewEncoder(hasher).Encode(o); err != nil {
		return "", fmt.Errorf("hashing %s: %w", base, err)
	}
	hash := base62(hasher.Sum(nil))
	if len(base)+len(hash) > maxNameLength {
		base = base[:maxNameLength-len(hash)-1]
	}
	return base + "-" + hash, nil
}

// policyRuleHash is resolver.PolicyRuleHashLabelValue.
func policyRuleHash(rules []rbacv1.PolicyRule) (string, error) {
	raw, err := json.Marshal(rules)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum224(raw)
	return base62(sum[:]), nil
}

// bindingHash is resolver.RoleReferenceAndSubjectHashLabelValue.
func bindingHash(roleRef rbacv1.RoleRef, subjects []rbacv1.Subject) (string, error) {
	raw, err := json.Marshal(&struct {
		RoleRef  rbacv1.RoleRef
		Subjects []rbacv1.Subject
	}{RoleRef: roleRef, Subjects: subjects})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum224(raw)
	return base62(sum[:]), nil
}

func base62(b []byte) string {
	var i big.Int
	i.SetBytes(b)
	return i.Text(62)
}

// KindOf returns an object's kind, also for typed objects whose TypeMeta is
// empty.
func KindOf(o client.Object) string {
	if kind := o.GetObjectKind().GroupVersionKind().Kind; kind != "" {
		return kind
	}
	switch o.(type) {
	case *corev1.ServiceAccount:
		return kindServiceAccount
	case *rbacv1.Role:
		return kindRole
	case *rbacv1.RoleBinding:
		return kindRoleBinding
	case *rbacv1.ClusterRole:
		return kindClusterRole
	case *rbacv1.ClusterRoleBinding:
		return kindClusterRoleBinding
	}
	return fmt.Sprintf("%T", o)
}

// Describe names an object for messages: Kind namespace/name.
func Describe(o client.Object) string {
	if o.GetNamespace() == "" {
		return KindOf(o) + " " + o.GetName()
	}
	return KindOf(o) + " " + o.GetNamespace() + "/" + o.GetName()
}
