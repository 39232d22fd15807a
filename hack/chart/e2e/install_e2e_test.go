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
	"testing"
	"time"

	"github.com/onsi/gomega"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// upgradeValues turns on what the local cluster can run beyond the
// defaults: the admission policies and the monitoring objects (their CRDs
// are generated from prometheus-operator's types). The webhook stays off:
// nothing would serve it.
const upgradeValues = `
admissionPolicies: {enabled: true}
monitoring:
  serviceMonitor: {enabled: true}
  prometheusRule: {enabled: true}
  dashboard: {enabled: true}
`

// releasedCRDs are v0.1.0's CRDs as its chart's crds/ installed them:
// without Helm's labels.
const releasedCRDs = "hack/bundle/releases/v0.1.0/manifests"

// TestHelmInstall installs the charts as the docs say, on three nodes that
// are all k3s servers: the CRD chart (taking over v0.1.0's CRDs, as an
// upgrade from it does) and the chart with its default values, which
// create the shipped NodeHealthCheck since NodeHealthCheck's CRD is there.
// It runs the manager under the chart's ServiceAccount and RBAC through
// one server's failure, reads the default template's protection report of
// a stand-in s3gw before and after contrib/s3gw-placement and after moving
// an installed s3gw onto its StorageClass; then upgrades with the
// admission policies and monitoring on, and uninstalls both releases.
func TestHelmInstall(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx, root := testContext(t), repoRoot(t)
	ch, err := helmchart.Load(root)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	crdChart, err := helmchart.LoadCRDs(root)
	g.Expect(err).NotTo(gomega.HaveOccurred())

	var helm *Helm
	env := startEnv(t, func(ctx context.Context, c *cluster.Cluster) error {
		if err := addServerNodes(ctx, c, "helm"); err != nil {
			return err
		}
		if err := kubectlApply(ctx, c, filepath.Join(root, monitoringCRDs)); err != nil {
			return err
		}
		if err := applyCRDs(ctx, c, filepath.Join(root, releasedCRDs)); err != nil {
			return err
		}
		var err error
		if helm, err = NewHelm(c.KubeconfigPath, harness.ManagerNamespace); err != nil {
			return err
		}
		began := time.Now()
		if err := helm.Adopt(ctx, helmchart.CRDReleaseName, crdChart, nil); err != nil {
			return err
		}
		err = helm.Install(ctx, helmchart.ReleaseName, ch, nil, nil)
		t.Logf("helm install %s and %s -n %s, default values: %s", helmchart.CRDReleaseName, helmchart.ReleaseName,
			harness.ManagerNamespace, time.Since(began).Round(time.Millisecond))
		return err
	})
	expectCRDsOf(ctx, t, env, crdChart)

	failover(ctx, t, env, root, "helm")
	placement(ctx, t, env, root)

	values := map[string]any{}
	g.Expect(yaml.Unmarshal([]byte(upgradeValues), &values)).To(gomega.Succeed())
	g.Expect(helm.Upgrade(ctx, helmchart.ReleaseName, ch, withReplicas(values, 3), nil)).To(gomega.Succeed())
	var d appsv1.Deployment
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.ManagerNamespace, Name: managerDeployment}, &d)).To(gomega.Succeed())
	g.Expect(*d.Spec.Replicas).To(gomega.Equal(int32(3)), "helm upgrade applied the new values")
	g.Expect(d.Spec.Template.Spec.PriorityClassName).To(gomega.Equal("s3gw-remediation-critical"))
	expectPoliciesTypeCheck(ctx, t, env)
	expectScrapeToken(ctx, t, env)

	g.Expect(helm.Uninstall(helmchart.ReleaseName)).To(gomega.Succeed())
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: harness.ManagerNamespace, Name: managerDeployment}, &d)
	g.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
	g.Expect(err).To(gomega.HaveOccurred(), "helm uninstall removed the manager")
	g.Expect(helm.Uninstall(helmchart.CRDReleaseName)).To(gomega.Succeed())
	var templates s3gwv1alpha1.S3GWRemediationTemplateList
	g.Expect(env.Client.List(ctx, &templates)).To(gomega.Succeed(), "uninstalling the CRD chart keeps the CRDs (helm.sh/resource-policy: keep)")
}

// TestOneFileInstall applies dist/ as a user would, with `kubectl apply
// --server-side -f`, the shipped NodeHealthCheck included, on three k3s
// servers, and runs the manager under its ServiceAccount and RBAC through
// one server's failure.
func TestOneFileInstall(t *testing.T) {
	ctx, root := testContext(t), repoRoot(t)
	env := startEnv(t, func(ctx context.Context, c *cluster.Cluster) error {
		if err := addServerNodes(ctx, c, "dist"); err != nil {
			return err
		}
		return kubectlApply(ctx, c, filepath.Join(root, monitoringCRDs),
			filepath.Join(root, "dist", "install.yaml"),
			filepath.Join(root, "dist", "install-policies.yaml"),
			filepath.Join(root, "dist", "install-monitoring.yaml"),
			filepath.Join(root, "dist", "install-nodehealthcheck.yaml"))
	})
	expectPoliciesTypeCheck(ctx, t, env)
	expectScrapeToken(ctx, t, env)
	failover(ctx, t, env, root, "dist")
}

// applyCRDs applies the CRDs among the manifests in dir, as a chart's
// crds/ or `kubectl apply` leaves them: without Helm's labels.
func applyCRDs(ctx context.Context, c *cluster.Cluster, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.medik8s.io_*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRDs in %s", dir)
	}
	return kubectlApply(ctx, c, files...)
}

// expectCRDsOf expects the CRDs to be the chart's, owned by its release.
func expectCRDsOf(ctx context.Context, t *testing.T, env *harness.Env, crdChart *chartv2.Chart) {
	t.Helper()
	g := gomega.NewWithT(t)
	objs, _, err := helmchart.Render(crdChart, harness.ManagerNamespace, nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, want := range objs {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(want.GroupVersionKind())
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: want.GetName()}, crd)).To(gomega.Succeed())
		g.Expect(crd.GetAnnotations()).To(gomega.HaveKeyWithValue("meta.helm.sh/release-name", helmchart.CRDReleaseName))
		g.Expect(crd.GetAnnotations()).To(gomega.HaveKeyWithValue("helm.sh/resource-policy", "keep"))
		g.Expect(schemas(crd)).To(gomega.Equal(schemas(want)), "%s is this tree's, not v0.1.0's", want.GetName())
	}
}

// schemas are a CRD's versions' schemas.
func schemas(crd *unstructured.Unstructured) []any {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	out := make([]any, 0, len(versions))
	for _, v := range versions {
		schema, _, _ := unstructured.NestedMap(v.(map[string]any), "schema", "openAPIV3Schema")
		out = append(out, schema)
	}
	return out
}

// expectScrapeToken waits for the token controller to fill the Secret the
// ServiceMonitor scrapes with, and checks that the token may read
// /metrics.
func expectScrapeToken(ctx context.Context, t *testing.T, env *harness.Env) {
	t.Helper()
	g := gomega.NewWithT(t)
	g.Eventually(func(g gomega.Gomega) []byte {
		var secret corev1.Secret
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.ManagerNamespace, Name: "s3gw-remediation-metrics-token"}, &secret)).
			To(gomega.Succeed())
		return secret.Data["token"]
	}).WithContext(ctx).WithTimeout(time.Minute).ShouldNot(gomega.BeEmpty(), "the token controller fills the scrape token")
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:                  "system:serviceaccount:" + harness.ManagerNamespace + ":s3gw-remediation-metrics-scraper",
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
	}}
	g.Expect(env.Client.Create(ctx, review)).To(gomega.Succeed())
	g.Expect(review.Status.Allowed).To(gomega.BeTrue(), "the scraper may get /metrics: %s", review.Status.Reason)
}

func withReplicas(values map[string]any, n int) map[string]any {
	out := map[string]any{"replicaCount": n}
	for k, v := range values {
		out[k] = v
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// testContext ends with the test, or a minute before its deadline.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	if deadline, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), deadline.Add(-time.Minute))
	}
	t.Cleanup(cancel)
	return ctx
}

// logDir keeps the cluster's component logs when LOCAL_CLUSTER_LOG_DIR is set.
func logDir(name string) string {
	if dir := os.Getenv("LOCAL_CLUSTER_LOG_DIR"); dir != "" {
		return filepath.Join(dir, name)
	}
	return ""
}
