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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
)

// repoRoot is found from this file, so that tests do not depend on the
// working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root, err := olm.FindRoot(filepath.Dir(file))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestPermissionObjectsMatchOLM compares PermissionObjects with what OLM
// v0.38.0's resolver.RBACForClusterServiceVersion derives from the same CSV
// (testdata/olmrbac regenerates the reference). Names and the
// olm.permissions.hash labels must match: OLM finds the RBAC it expects by
// those labels.
func TestPermissionObjectsMatchOLM(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "rbac-csv.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(data, csv); err != nil {
		t.Fatal(err)
	}
	objs, err := PermissionObjects(csv)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		if o.GetLabels()[OLMManagedLabel] != "true" {
			t.Errorf("%s lacks %s=true, which the catalog operator adds", Describe(o), OLMManagedLabel)
		}
		got = append(got, normalize(t, o, false))
	}

	raw, err := os.ReadFile(filepath.Join("testdata", "rbac-olm-v0.38.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var olmObjs []map[string]any
	if err := json.Unmarshal(raw, &olmObjs); err != nil {
		t.Fatal(err)
	}
	want := make([]map[string]any, 0, len(olmObjs))
	for _, m := range olmObjs {
		want = append(want, normalize(t, &unstructured.Unstructured{Object: m}, true))
	}
	sortObjects(got)
	sortObjects(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PermissionObjects differs from OLM's RBACForClusterServiceVersion (-olm +ours):\n%s", diff)
	}
}

// normalize reduces an object to what the API server keeps. OLM's resolver
// leaves two things to ExecutePlan that PermissionObjects does at once: the
// olm.managed label and the namespace of an account that only has cluster
// permissions. It also sets a namespace on ClusterRoleBindings, which the
// API server drops.
func normalize(t *testing.T, o client.Object, fromOLM bool) map[string]any {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	kind := KindOf(o)
	meta := m["metadata"].(map[string]any)
	out := map[string]any{"kind": kind, "name": meta["name"]}
	switch kind {
	case kindClusterRole, kindClusterRoleBinding:
	case "ServiceAccount":
		ns := meta["namespace"]
		if fromOLM && ns == nil {
			ns = "example-system"
		}
		out["namespace"] = ns
	default:
		out["namespace"] = meta["namespace"]
	}
	labels := map[string]any{}
	if l, ok := meta["labels"].(map[string]any); ok {
		for k, v := range l {
			if k != OLMManagedLabel {
				labels[k] = v
			}
		}
	}
	out["labels"] = labels
	out["ownerReferences"] = meta["ownerReferences"]
	for _, f := range []string{"rules", "roleRef", "subjects"} {
		out[f] = m[f]
	}
	return out
}

func sortObjects(objs []map[string]any) {
	sort.Slice(objs, func(i, j int) bool {
		return fmt.Sprint(objs[i]["kind"], objs[i]["name"]) < fmt.Sprint(objs[j]["kind"], objs[j]["name"])
	})
}

// TestCommittedBundleInstallPlan checks what the e2e test will create from
// the committed bundle/, without a cluster.
func TestCommittedBundleInstallPlan(t *testing.T) {
	b, err := ReadBundle(filepath.Join(repoRoot(t), olm.BundleDir, "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	owned := map[string]bool{}
	for _, crd := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		owned[crd.Name] = true
	}
	for _, crd := range b.CRDsForInstall() {
		if !owned[crd.Name] {
			t.Errorf("bundle CRD %s is not owned by the CSV", crd.Name)
		}
		delete(owned, crd.Name)
		if crd.Labels[OLMManagedLabel] != "true" {
			t.Errorf("CRD %s lacks %s", crd.Name, OLMManagedLabel)
		}
	}
	for name := range owned {
		t.Errorf("the CSV owns %s, which the bundle does not ship", name)
	}

	const ns = "s3gw-remediation-system"
	csv := b.CSVForInstall(ns)
	csv.UID = types.UID("6f0f3c1e-0000-4000-8000-000000000001")
	objs, err := b.InstallPlanObjects(csv, func(gvk schema.GroupVersionKind) (bool, error) {
		switch gvk.Kind {
		case "Service", "PodDisruptionBudget", "ServiceMonitor", "PrometheusRule", kindServiceAccount, "Secret":
			return true, nil
		case kindClusterRole, kindClusterRoleBinding:
			return false, nil
		}
		return false, fmt.Errorf("unexpected kind %s", gvk.Kind)
	})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[KindOf(o)]++
		if o.GetLabels()[OLMManagedLabel] != "true" {
			t.Errorf("%s lacks %s", Describe(o), OLMManagedLabel)
		}
		if u, ok := o.(*unstructured.Unstructured); ok && u.GetNamespace() != "" {
			if u.GetNamespace() != ns || len(u.GetOwnerReferences()) != 1 || u.GetOwnerReferences()[0].UID != csv.UID {
				t.Errorf("%s %s: namespace %q, owners %v; want %s, owned by the CSV", u.GetKind(), u.GetName(), u.GetNamespace(), u.GetOwnerReferences(), ns)
			}
		}
	}
	t.Logf("InstallPlan objects after the CRDs and the CSV: %v", kinds)
	// The manager's ServiceAccount, and the metrics scraper's of config/prometheus.
	if kinds[kindServiceAccount] != 2 || kinds[kindClusterRole] < 3 || kinds[kindRole] == 0 || kinds[kindClusterRoleBinding] == 0 || kinds[kindRoleBinding] == 0 {
		t.Errorf("want the manager's ServiceAccount and its Roles and ClusterRoles, and the scraper's ServiceAccount, got %v", kinds)
	}
	if kinds["PodDisruptionBudget"] != 1 {
		t.Errorf("want the manager's PodDisruptionBudget, got %v", kinds)
	}
	if kinds["ServiceMonitor"] != 1 || kinds["PrometheusRule"] != 1 || kinds["Secret"] != 1 {
		t.Errorf("want the ServiceMonitor, its token Secret and the PrometheusRule of config/prometheus, got %v", kinds)
	}
}

func TestInstallPlanRejectsUnsupportedKinds(t *testing.T) {
	b := &Bundle{
		CSV: &operatorsv1alpha1.ClusterServiceVersion{},
		Objects: []*unstructured.Unstructured{{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "extra"},
		}}},
	}
	csv := b.CSVForInstall("ns")
	csv.UID = "uid"
	if _, err := b.InstallPlanObjects(csv, func(schema.GroupVersionKind) (bool, error) { return true, nil }); err == nil {
		t.Error("a Deployment among the bundle manifests was accepted; OLM's InstallPlan fails on it")
	}
}
