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

package helmchart_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/manifests"
)

// namespace is config/default's; the chart renders into the release's.
const namespace = "s3gw-remediation-system"

// helmLabels are the labels only the chart adds (Helm's own conventions);
// config/ says managed-by kustomize where the chart says Helm.
var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by"}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// values parses a values document.
func values(t *testing.T, doc string) map[string]any {
	t.Helper()
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("values %q: %v", doc, err)
	}
	return v
}

// render renders the CRD chart and then the chart with the values of doc,
// as a user installs them, where the API versions of apiVersions are
// served besides Kubernetes' own.
func render(t *testing.T, doc string, apiVersions ...string) []*unstructured.Unstructured {
	t.Helper()
	g := gomega.NewWithT(t)
	crdChart, err := helmchart.LoadCRDs(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	crds, _, err := helmchart.Render(crdChart, namespace, nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	ch, err := helmchart.Load(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	objs, _, err := helmchart.Render(ch, namespace, values(t, doc), apiVersions...)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return append(crds, objs...)
}

func build(t *testing.T, dirs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, dir := range dirs {
		objs, err := manifests.Build(root(t), dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range objs {
			if u.GetKind() != "Namespace" { // the release's namespace is Helm's to create
				out = append(out, u)
			}
		}
	}
	return out
}

func key(u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", u.GroupVersionKind(), u.GetNamespace(), u.GetName())
}

// chartPriorityClass is the chart's own PriorityClass, which config/ does
// not have (kubectl and OLM installs run the manager without one).
const chartPriorityClass = "s3gw-remediation-critical"

// withoutHelmLabels drops the labels only Helm adds, wherever labels are,
// the CRDs' resource policy (kept on uninstall), and the manager's
// reference to the chart's own PriorityClass.
func withoutHelmLabels(u *unstructured.Unstructured) map[string]any {
	m := runtime.DeepCopyJSON(u.Object)
	unstructured.RemoveNestedField(m, "metadata", "annotations", "helm.sh/resource-policy")
	if name, _, _ := unstructured.NestedString(m, "spec", "template", "spec", "priorityClassName"); name == chartPriorityClass {
		unstructured.RemoveNestedField(m, "spec", "template", "spec", "priorityClassName")
	}
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
		labels, found, _ := unstructured.NestedStringMap(m, path...)
		if !found {
			continue
		}
		for _, l := range helmLabels {
			delete(labels, l)
		}
		if len(labels) == 0 {
			unstructured.RemoveNestedField(m, path...)
			continue
		}
		_ = unstructured.SetNestedStringMap(m, labels, path...)
	}
	return m
}

// expectSame expects the chart to render exactly the objects kustomize
// builds from dirs, but for Helm's labels, plus the objects of the kinds
// in extra and those the chart always adds: the default template and its
// own PriorityClass.
func expectSame(t *testing.T, chart, config []*unstructured.Unstructured, extra ...string) {
	t.Helper()
	g := gomega.NewWithT(t)
	extra = append(extra, "S3GWRemediationTemplate", "PriorityClass")
	rendered := map[string]*unstructured.Unstructured{}
	for _, u := range chart {
		g.Expect(rendered).NotTo(gomega.HaveKey(key(u)), "the chart renders %s twice", key(u))
		rendered[key(u)] = u
	}
	for _, want := range config {
		got, ok := rendered[key(want)]
		g.Expect(ok).To(gomega.BeTrue(), "the chart does not render %s", key(want))
		if !ok {
			continue
		}
		if diff := cmp.Diff(withoutHelmLabels(want), withoutHelmLabels(got)); diff != "" {
			t.Errorf("%s differs from config/ (-config +chart):\n%s", key(want), diff)
		}
		delete(rendered, key(want))
	}
	for k, u := range rendered {
		g.Expect(extra).To(gomega.ContainElement(u.GetKind()), "the chart renders %s, which config/ does not", k)
	}
}

// TestCRDsAreKept: the companion chart renders config/crd's CRDs, each
// kept when its release is uninstalled, and nothing else.
func TestCRDsAreKept(t *testing.T) {
	g := gomega.NewWithT(t)
	crdChart, err := helmchart.LoadCRDs(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	crds, _, err := helmchart.Render(crdChart, namespace, nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	want := build(t, "config/crd")
	g.Expect(crds).To(gomega.HaveLen(len(want)))
	for _, u := range crds {
		g.Expect(u.GetKind()).To(gomega.Equal("CustomResourceDefinition"))
		g.Expect(u.GetAnnotations()).To(gomega.HaveKeyWithValue("helm.sh/resource-policy", "keep"))
	}
	ch, err := helmchart.Load(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(ch.CRDObjects()).To(gomega.BeEmpty(), "the chart leaves its CRDs to the companion chart")
	g.Expect(ch.Metadata.Annotations).To(gomega.HaveKeyWithValue("catalog.cattle.io/auto-install", crdChart.Name()+"=match"))
	g.Expect(crdChart.Metadata.Version).To(gomega.Equal(ch.Metadata.Version))
}

func TestDefaultsRenderConfigDefault(t *testing.T) {
	expectSame(t, render(t, ""), build(t, "config/default"))
}

func TestCertManagerWebhookRendersConfigWithCertManager(t *testing.T) {
	expectSame(t, render(t, "webhook: {enabled: true, certManager: {enabled: true}}"),
		build(t, "config/with-cert-manager"))
}

func TestAdmissionPoliciesRenderConfigPolicy(t *testing.T) {
	expectSame(t, render(t, "admissionPolicies: {enabled: true}"),
		build(t, "config/default", "config/policy-standalone"))
}

// With cert-manager, the manager serves cert-manager's certificate and
// Prometheus verifies it, as config/with-cert-manager and
// config/prometheus-with-cert-manager do.
func TestCertManagerMonitoringRendersConfigPrometheusWithCertManager(t *testing.T) {
	expectSame(t, render(t, `webhook: {enabled: true}
certManager: {enabled: true}
monitoring:
  serviceMonitor: {enabled: true}
  prometheusRule: {enabled: true}
  dashboard: {enabled: true}`),
		build(t, "config/with-cert-manager", "config/prometheus-with-cert-manager", "config/grafana"))
}

func TestMonitoringRendersConfigPrometheusAndGrafana(t *testing.T) {
	expectSame(t, render(t, `monitoring:
  serviceMonitor: {enabled: true}
  prometheusRule: {enabled: true}
  dashboard: {enabled: true}`),
		build(t, "config/default", "config/prometheus", "config/grafana"))
}

// TestPackage packages the charts as the release does and reads each
// archive back: the version is the operator's, and the files generated
// from config/ travel in it.
func TestPackage(t *testing.T) {
	g := gomega.NewWithT(t)
	paths, err := helmchart.Package(root(t), t.TempDir())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(paths).NotTo(gomega.BeEmpty())
	source, err := helmchart.Load(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, p := range paths {
		ch, err := loader.Load(p)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(ch.Metadata.Version).To(gomega.Equal(source.Metadata.Version), "%s", p)
		g.Expect(filepath.Base(p)).To(gomega.Equal(ch.Metadata.Name + "-" + ch.Metadata.Version + ".tgz"))
		if ch.Metadata.Name == source.Metadata.Name {
			g.Expect(ch.Files).To(gomega.ContainElement(gomega.HaveField("Name", "files/monitoring.yaml")))
			g.Expect(ch.Schema).NotTo(gomega.BeEmpty(), "values.schema.json")
		}
	}
}
