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
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// chartValues turns on everything the local cluster can run: the
// admission policies, the NodeHealthCheck (its CRD is a fixture here) and
// the monitoring objects (their CRDs are generated from prometheus-operator's
// types). The webhook stays off: nothing would serve it.
const chartValues = `
admissionPolicies: {enabled: true}
nodeHealthCheck: {enabled: true}
monitoring:
  serviceMonitor: {enabled: true}
  prometheusRule: {enabled: true}
  dashboard: {enabled: true}
  prometheusServiceAccount: {name: prometheus, namespace: monitoring}
`

// TestHelmInstall installs the chart with `helm install`, runs the manager
// under the chart's ServiceAccount and RBAC through one node failure, and
// reads the chart's default template's protection report of a stand-in s3gw
// before and after contrib/s3gw-placement; then upgrades and uninstalls.
func TestHelmInstall(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx, root := testContext(t), repoRoot(t)
	ch, err := helmchart.Load(root)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	values := map[string]any{}
	g.Expect(yaml.Unmarshal([]byte(chartValues), &values)).To(gomega.Succeed())

	var helm *Helm
	env := startEnv(t, func(ctx context.Context, c *cluster.Cluster) error {
		if err := addManagerNodes(ctx, c, "helm"); err != nil {
			return err
		}
		if err := kubectlApply(ctx, c, filepath.Join(root, monitoringCRDs)); err != nil {
			return err
		}
		var err error
		if helm, err = NewHelm(c.KubeconfigPath, harness.ManagerNamespace); err != nil {
			return err
		}
		began := time.Now()
		err = helm.Install(ctx, helmchart.ReleaseName, ch, values, nil)
		t.Logf("helm install %s -n %s: %s", helmchart.ReleaseName, harness.ManagerNamespace, time.Since(began).Round(time.Millisecond))
		return err
	})

	failover(ctx, t, env, root, "helm")
	placement(ctx, t, env, root)

	g.Expect(helm.Upgrade(ctx, helmchart.ReleaseName, ch, withReplicas(values, 3))).To(gomega.Succeed())
	var d appsv1.Deployment
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.ManagerNamespace, Name: managerDeployment}, &d)).To(gomega.Succeed())
	g.Expect(*d.Spec.Replicas).To(gomega.Equal(int32(3)), "helm upgrade applied the new values")

	g.Expect(helm.Uninstall(helmchart.ReleaseName)).To(gomega.Succeed())
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: harness.ManagerNamespace, Name: managerDeployment}, &d)
	g.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
	g.Expect(err).To(gomega.HaveOccurred(), "helm uninstall removed the manager")
	var templates s3gwv1alpha1.S3GWRemediationTemplateList
	g.Expect(env.Client.List(ctx, &templates)).To(gomega.Succeed(), "Helm leaves the CRDs of crds/ in place")
}

// TestOneFileInstall applies dist/ as a user would, with `kubectl apply
// --server-side -f`, and runs the manager under its ServiceAccount and
// RBAC through one node failure.
func TestOneFileInstall(t *testing.T) {
	ctx, root := testContext(t), repoRoot(t)
	env := startEnv(t, func(ctx context.Context, c *cluster.Cluster) error {
		if err := addManagerNodes(ctx, c, "dist"); err != nil {
			return err
		}
		return kubectlApply(ctx, c, filepath.Join(root, monitoringCRDs),
			filepath.Join(root, "dist", "install.yaml"),
			filepath.Join(root, "dist", "install-policies.yaml"),
			filepath.Join(root, "dist", "install-monitoring.yaml"))
	})
	expectPoliciesTypeCheck(ctx, t, env)
	failover(ctx, t, env, root, "dist")
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
