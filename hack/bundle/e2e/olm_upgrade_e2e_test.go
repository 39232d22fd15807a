//go:build e2e

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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/crds"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

// TestUpgradesThroughOLM has OLM's real catalog and olm operators install
// the newest published release (frozen in hack/bundle/releases) from a
// catalog, then upgrade it to this tree's bundle as the next version, along
// the catalog's channel (replaces and olm.skipRange), with an
// S3GWRemediationTemplate and an S3GWRemediation in place. The catalog is
// served from this process as `opm serve` would (Registry); the bundles'
// objects travel in the catalog, so no unpack Job is needed.
func TestUpgradesThroughOLM(t *testing.T) {
	began := time.Now()
	root, ctx := olmTest(t, 8*time.Minute)

	from, to := upgradeBundles(t, root)
	cfg, err := olm.CatalogConfig(root, to.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	entries := make([]string, 0, len(cfg.Channels[0].Entries))
	for i := range cfg.Bundles {
		cfg.Bundles[i].Image = "" // served with their objects
	}
	for _, e := range cfg.Channels[0].Entries {
		entries = append(entries, fmt.Sprintf("%s (replaces %q, skipRange %q)", e.Name, e.Replaces, e.SkipRange))
	}
	t.Logf("Catalog channel %s: %s", cfg.Channels[0].Name, strings.Join(entries, ", "))
	registry, err := ServeCatalog(ctx, *cfg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = registry.Stop() })

	c, cl := startCluster(ctx, t, "node-a", "node-b")
	createCRDs(ctx, t, cl, olmCRDs())
	createCRDs(ctx, t, cl, monitoringCRDs(t, root))
	create(ctx, t, cl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: olmNamespace}})
	o := startOLM(t, root, c)
	catalogOperator := startCatalogOperator(t, root, c)
	w := waiter{olm: o}
	t.Logf("Cluster, the olm and catalog operators and the catalog at %s up after %s", registry.Address, since(began))

	namespace := from.bundle.CSV.Annotations["operatorframework.io/suggested-namespace"]
	create(ctx, t, cl, &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Name: catalogSourceName, Namespace: olmNamespace},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: registry.Address, DisplayName: "s3gw Remediation",
		},
	})
	create(ctx, t, cl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(ctx, t, cl, &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Name: operatorGroupName, Namespace: namespace}})
	sub := &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Name: subscriptionName, Namespace: namespace},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			Package: olm.PackageName, Channel: olm.Channel,
			CatalogSource: catalogSourceName, CatalogSourceNamespace: olmNamespace,
			StartingCSV:         from.bundle.CSV.Name,
			InstallPlanApproval: operatorsv1alpha1.ApprovalManual,
		},
	}
	create(ctx, t, cl, sub)

	install := func(csvName string) {
		t.Helper()
		phaseBegan := time.Now()
		plan := approvePlanFor(ctx, t, w, cl, namespace, csvName, catalogOperator)
		csv := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: csvName}}
		w.until(ctx, t, 3*time.Minute, "CSV "+csvName+" Succeeded", func(ctx context.Context) (bool, error) {
			err := cl.Get(ctx, client.ObjectKeyFromObject(csv), csv)
			return err == nil && csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded, client.IgnoreNotFound(err)
		}, func() string {
			return fmt.Sprintf("CSV phase %q (%s: %s); InstallPlan %s phase %q conditions %v; %s", csv.Status.Phase, csv.Status.Reason,
				csv.Status.Message, plan.Name, plan.Status.Phase, plan.Status.Conditions, catalogOperator.LogTail(20))
		})
		t.Logf("InstallPlan %s approved and %s Succeeded %s later", plan.Name, csvName, since(phaseBegan))
	}

	install(from.bundle.CSV.Name)
	crs := createRemediationCRs(ctx, t, cl, namespace)

	upgradeBegan := time.Now()
	install(to.bundle.CSV.Name)
	w.until(ctx, t, 2*time.Minute, "OLM to delete the replaced CSV "+from.bundle.CSV.Name, func(ctx context.Context) (bool, error) {
		err := cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: from.bundle.CSV.Name}, &operatorsv1alpha1.ClusterServiceVersion{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	t.Logf("Upgraded %s -> %s in %s", from.bundle.CSV.Name, to.bundle.CSV.Name, since(upgradeBegan))

	// The API server fills in, on read, the defaults of fields the new
	// schema added, for objects stored before: those are the only changes.
	t.Run("the remediation CRs survive the upgrade unchanged but for the new fields' defaults", func(t *testing.T) {
		for _, want := range crs {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(want.GroupVersionKind())
			if err := cl.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
				t.Fatalf("%s %s: %v", want.GetKind(), want.GetName(), err)
			}
			if got.GetUID() != want.GetUID() {
				t.Errorf("%s %s was recreated", want.GetKind(), want.GetName())
			}
			served, err := CRDSchema(to.bundle.CRDs, want.GroupVersionKind())
			if err != nil {
				t.Fatal(err)
			}
			for _, field := range []string{"spec", "status"} {
				for _, change := range ChangesButDefaults(want.Object[field], got.Object[field], served.Properties[field], field) {
					t.Errorf("%s %s: %s", want.GetKind(), want.GetName(), change)
				}
			}
		}
	})
	t.Run("the CRDs are the new bundle's", func(t *testing.T) {
		for _, crd := range to.bundle.CRDs {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Spec.Versions, crd.Spec.Versions) {
				t.Errorf("CRD %s does not serve the new bundle's versions and schema", crd.Name)
			}
		}
	})
	t.Run("the manager runs the new image", func(t *testing.T) {
		want := to.bundle.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0]
		d := &appsv1.Deployment{}
		w.until(ctx, t, time.Minute, "the Deployment to roll to the new image", func(ctx context.Context) (bool, error) {
			if err := cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: want.Name}, d); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return d.Spec.Template.Spec.Containers[0].Image == want.Spec.Template.Spec.Containers[0].Image &&
				d.Status.UpdatedReplicas == ptrValue(d.Spec.Replicas) && d.Status.AvailableReplicas == ptrValue(d.Spec.Replicas), nil
		})
		t.Logf("Deployment %s runs %s", d.Name, d.Spec.Template.Spec.Containers[0].Image)
	})
	t.Run("the Subscription follows the channel", func(t *testing.T) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(sub), sub); err != nil {
			t.Fatal(err)
		}
		if sub.Status.InstalledCSV != to.bundle.CSV.Name {
			t.Errorf("installedCSV %q, want %q", sub.Status.InstalledCSV, to.bundle.CSV.Name)
		}
	})
	t.Run("the new bundle's monitoring objects are installed", func(t *testing.T) {
		for _, obj := range to.bundle.Objects {
			if !strings.HasPrefix(obj.GetAPIVersion(), "monitoring.coreos.com/") {
				continue
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			if err := cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: obj.GetName()}, got); err != nil {
				t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
	})
	t.Logf("Done in %s", since(began))
}

// Names of the upgrade test's objects.
const (
	catalogSourceName = "s3gw-remediation-catalog"
	subscriptionName  = "s3gw-remediation"
	remediationGroup  = "s3gw-remediation.medik8s.io/v1alpha1"
)

// upgradeBundle is a bundle directory and its manifests.
type upgradeBundle struct {
	dir    string
	bundle *Bundle
}

// upgradeBundles returns the newest frozen release, and this tree's bundle
// as the version after it: VERSION if that is newer (a bumped tree), else
// the next minor version, replacing the release.
func upgradeBundles(t *testing.T, root string) (from, to upgradeBundle) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, olm.ReleasesDir, "v*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no frozen release under %s (%v)", olm.ReleasesDir, err)
	}
	var newest semver.Version
	for _, dir := range dirs {
		v, err := semver.Parse(strings.TrimPrefix(filepath.Base(dir), "v"))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if v.GT(newest) {
			newest, from.dir = v, dir
		}
	}
	next := semver.Version{Major: newest.Major, Minor: newest.Minor + 1}
	if v, err := semver.Parse(os.Getenv("VERSION")); err == nil && v.GT(newest) {
		next = v
	}
	image := os.Getenv("IMG")
	if image == "" {
		t.Fatal("IMG is unset: run `make test-olm-upgrade`")
	}
	image = image[:strings.LastIndex(image, ":")] + ":v" + next.String()
	files, err := olm.RenderBundle(olm.BundleOptions{Root: root, Version: next.String(), Image: image, Replaces: newest.String()})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := files.Write(out, olm.BundleDir); err != nil {
		t.Fatal(err)
	}
	to.dir = filepath.Join(out, olm.BundleDir)
	for _, b := range []*upgradeBundle{&from, &to} {
		if b.bundle, err = ReadBundle(filepath.Join(b.dir, "manifests")); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("Upgrading %s (%s) to this tree as %s (%s)", from.bundle.CSV.Name, olm.ReleasesDir, to.bundle.CSV.Name, image)
	return from, to
}

// approvePlanFor approves the InstallPlan the catalog operator made for
// csvName once it asks for approval, as `kubectl patch installplan ...
// approved: true` would.
func approvePlanFor(ctx context.Context, t *testing.T, w waiter, cl client.Client, namespace, csvName string, catalogOperator *OLM) *operatorsv1alpha1.InstallPlan {
	t.Helper()
	plan := &operatorsv1alpha1.InstallPlan{}
	w.until(ctx, t, 2*time.Minute, "the catalog operator's InstallPlan for "+csvName, func(ctx context.Context) (bool, error) {
		var plans operatorsv1alpha1.InstallPlanList
		if err := cl.List(ctx, &plans, client.InNamespace(namespace)); err != nil {
			return false, err
		}
		for i := range plans.Items {
			// The catalog operator writes the plan's first status after
			// creating it; an approval before that loses it a conflict.
			for _, name := range plans.Items[i].Spec.ClusterServiceVersionNames {
				if name == csvName && plans.Items[i].Status.Phase != "" {
					*plan = plans.Items[i]
					return true, nil
				}
			}
		}
		return false, nil
	}, func() string { return catalogOperator.LogTail(30) })
	t.Logf("InstallPlan %s for %s: phase %s", plan.Name, csvName, plan.Status.Phase)
	if !plan.Spec.Approved {
		patch := client.MergeFrom(plan.DeepCopy())
		plan.Spec.Approved = true
		if err := cl.Patch(ctx, plan, patch); err != nil {
			t.Fatal(err)
		}
	}
	w.until(ctx, t, 2*time.Minute, "InstallPlan "+plan.Name+" Complete", func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(plan), plan); err != nil {
			return false, err
		}
		return plan.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete, nil
	}, func() string {
		return fmt.Sprintf("phase %q conditions %v; %s", plan.Status.Phase, plan.Status.Conditions, catalogOperator.LogTail(30))
	})
	return plan
}

// createRemediationCRs creates a template and a remediation as NodeHealthCheck
// would have left them after a failover, and returns them as stored.
func createRemediationCRs(ctx context.Context, t *testing.T, cl client.Client, namespace string) []*unstructured.Unstructured {
	t.Helper()
	template := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": remediationGroup, "kind": "S3GWRemediationTemplate",
		"metadata": map[string]any{"name": "s3gw-after-upgrade", "namespace": namespace},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"release": map[string]any{"strategy": "DeleteVolumeAttachment"},
		}}},
	}}
	remediation := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": remediationGroup, "kind": "S3GWRemediation",
		"metadata": map[string]any{"name": "node-a", "namespace": namespace,
			"annotations": map[string]any{"remediation.medik8s.io/template-name": "s3gw-after-upgrade"}},
		"spec": map[string]any{"release": map[string]any{"strategy": "DeleteVolumeAttachment"}},
	}}
	out := make([]*unstructured.Unstructured, 0, 2)
	for _, obj := range []*unstructured.Unstructured{template, remediation} {
		create(ctx, t, cl, obj)
		out = append(out, obj)
	}
	status := map[string]any{"phase": "Succeeded", "nodeName": "node-a", "conditions": []any{map[string]any{
		"type": "Succeeded", "status": "True", "reason": "RemediationFinishedSuccessfully", "message": "s3gw moved",
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
	}}}
	if err := unstructured.SetNestedField(remediation.Object, status, "status"); err != nil {
		t.Fatal(err)
	}
	if err := cl.Status().Update(ctx, remediation); err != nil {
		t.Fatalf("setting the remediation's status: %v", err)
	}
	for _, obj := range out {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("Created S3GWRemediationTemplate %s and S3GWRemediation %s (phase Succeeded)", template.GetName(), remediation.GetName())
	return out
}

// startCatalogOperator runs bin/olm-catalog against the cluster until the
// test ends, as startOLM runs bin/olm.
func startCatalogOperator(t *testing.T, root string, c *cluster.Cluster) *OLM {
	t.Helper()
	return runOLMBinary(t, c, filepath.Join(root, "bin", "olm-catalog"), "catalog-operator.log")
}

// monitoringCRDs are the Prometheus Operator's ServiceMonitor and
// PrometheusRule CRDs (make monitoring-crds), which the bundle's monitoring
// objects need.
func monitoringCRDs(t *testing.T, root string) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "test", "crds", "monitoring", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no CRDs in test/crds/monitoring (%v): run make monitoring-crds", err)
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, crd)
	}
	return out
}

// olmCRDs are OLM's own CRDs, from operator-framework/api.
func olmCRDs() []*apiextensionsv1.CustomResourceDefinition {
	return []*apiextensionsv1.CustomResourceDefinition{
		crds.CatalogSource(), crds.ClusterServiceVersion(), crds.InstallPlan(), crds.OLMConfig(),
		crds.Operator(), crds.OperatorCondition(), crds.OperatorGroup(), crds.Subscription(),
	}
}
