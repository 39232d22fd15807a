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
	"net/http"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// dtoFamily is a scraped metric family.
type dtoFamily = dto.MetricFamily

const (
	// monitoringCRDs are prometheus-operator's ServiceMonitor and
	// PrometheusRule CRDs, generated from its Go types (make monitoring-crds).
	monitoringCRDs    = "test/crds/monitoring"
	managerDeployment = "s3gw-remediation-controller-manager"
	defaultTemplate   = "s3gw-remediation-default-template"
	// shippedNodeHealthCheck is config/nodehealthcheck's, which the chart
	// and dist/install-nodehealthcheck.yaml create.
	shippedNodeHealthCheck = "s3gw-nodes"
	recoveryDeadline       = 3 * time.Minute
)

// startEnv starts the local cluster with the operator installed by
// install, and no operator running yet.
func startEnv(t *testing.T, install func(context.Context, *cluster.Cluster) error) *harness.Env {
	t.Helper()
	opts := harness.Options{
		Cluster: cluster.Compressed(), NoOperator: true, InstallOperator: install,
		Logger: testr.NewWithOptions(t, testr.Options{Verbosity: 0}),
	}
	opts.Cluster.LogDir = logDir(t.Name())
	began := time.Now()
	env, err := harness.Start(testContext(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("environment up in %s: %s", time.Since(began).Round(100*time.Millisecond), env.Describe())
	return env
}

// serverLabels are what k3s and RKE2 put on each server node, where most
// s3gw clusters run nothing but servers: the shipped NodeHealthCheck must
// watch them.
var serverLabels = map[string]string{
	"node-role.kubernetes.io/control-plane": "true",
	"node-role.kubernetes.io/master":        "true",
	"node-role.kubernetes.io/etcd":          "true",
}

// addServerNodes adds three nodes labelled as k3s servers, and not as
// workers, in a zone of their own: prefix-1 (whose gateway fails),
// prefix-2 (its spare, holding its replica) and prefix-3 (where the manager
// process runs). Two of them are what the manager Deployment's replicas
// need (required anti-affinity), so that `helm install --wait` completes.
func addServerNodes(ctx context.Context, c *cluster.Cluster, prefix string) error {
	nodeLabels := map[string]string{harness.ZoneLabel: "zone-" + prefix}
	for k, v := range serverLabels {
		nodeLabels[k] = v
	}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if err := c.AddNodeWithLabels(ctx, name, nodeLabels); err != nil {
			return err
		}
		cmd, err := c.Kubectl(ctx, "label", "node", name, "node-role.kubernetes.io/worker-")
		if err != nil {
			return err
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl label node %s: %w\n%s", name, err, out)
		}
	}
	return nil
}

// kubectlApply is `kubectl apply --server-side -f` of each path in turn,
// waiting for the CRDs a path creates before the next one uses them.
func kubectlApply(ctx context.Context, c *cluster.Cluster, paths ...string) error {
	for _, file := range paths {
		cmd, err := c.Kubectl(ctx, "apply", "--server-side", "-f", file)
		if err != nil {
			return err
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl apply --server-side -f %s: %w\n%s", file, err, out)
		}
		cmd, _ = c.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("waiting for CRDs after %s: %w\n%s", file, err, out)
		}
	}
	return nil
}

// serverRoles picks, among the three servers of addServerNodes, the one
// whose gateway fails, its spare and the manager process's node. The
// failing one is a server the manager Deployment left free: kwok does not
// report a pod Ready again once its node is back, where a kubelet would,
// and the upgrade that follows waits for every replica.
func serverRoles(ctx context.Context, g gomega.Gomega, env *harness.Env, prefix string) (victim, spare, managerNode string) {
	var pods corev1.PodList
	g.Expect(env.Client.List(ctx, &pods, client.InNamespace(harness.ManagerNamespace),
		client.MatchingLabels{"app.kubernetes.io/name": "s3gw-remediation", "control-plane": "controller-manager"})).To(gomega.Succeed())
	servers := []string{prefix + "-1", prefix + "-2", prefix + "-3"}
	for i, n := range servers {
		busy := false
		for _, p := range pods.Items {
			busy = busy || p.Spec.NodeName == n
		}
		if !busy {
			servers[0], servers[i] = servers[i], servers[0]
			break
		}
	}
	return servers[0], servers[1], servers[2]
}

// failover runs the manager, built from cmd/manager, with leader election
// under the installed ServiceAccount, emulates the NodeHealthCheck the
// install created (the shipped one, config/nodehealthcheck) with the
// install's default template, and fails the server node of an s3gw
// gateway whose replica lives on another server: the remediation must
// move the gateway there, report Succeeded and clean up once the node is
// back.
//
// While the remediation is there, a scrape of the manager must show every
// series the shipped alert rules read; once it is gone, its phase series
// must be gone too.
func failover(ctx context.Context, t *testing.T, env *harness.Env, root, name string) {
	t.Helper()
	g := gomega.NewWithT(t)
	victim, spare, managerNode := serverRoles(ctx, g, env, name)
	manager, err := env.StartOperatorProcess(ctx, name, managerNode, harness.ProcessOptions{LeaderElection: true, InManagerNamespace: true})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = harness.WaitLeader(ctx, time.Minute, manager)
	g.Expect(err).NotTo(gomega.HaveOccurred(), "the manager takes the Lease with the installed leader election Role")

	em, err := env.WatchNodeHealthCheck(ctx, shippedNodeHealthCheck)
	g.Expect(err).NotTo(gomega.HaveOccurred(), "the install created the shipped NodeHealthCheck")
	g.Expect(em.Template.Name).To(gomega.Equal(defaultTemplate))
	for _, n := range []string{victim, spare, managerNode} {
		var node corev1.Node
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: n}, &node)).To(gomega.Succeed())
		selector, err := metav1.LabelSelectorAsSelector(&em.Selector)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(selector.Matches(labels.Set(node.Labels))).To(gomega.BeTrue(), "the shipped NodeHealthCheck watches server %s", n)
	}
	gw, err := env.DeployGateway(ctx, harness.GatewaySpec{
		Namespace: "s3gw-" + name, Release: name, Node: victim, Failover: []string{spare}, ReplicaNodes: []string{spare},
	})
	g.Expect(err).NotTo(gomega.HaveOccurred())

	r, err := env.Fail(ctx, gw, func(r *harness.Run, m harness.Milestone, after time.Duration) {
		t.Logf("  +%-7s %s: %s", harness.FormatDuration(after), r.Node, m)
	})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(gomega.Succeed())
	g.Expect(r.Wait(ctx, harness.RemediationSucceeded, time.Minute)).To(gomega.Succeed())
	_, node := r.Replacement()
	g.Expect(node).To(gomega.Equal(spare))
	t.Logf("failover of a k3s server under the %s install's ServiceAccount and NodeHealthCheck:\n%s", name, r.Format())
	expectAlertSeries(ctx, t, root, manager)

	g.Expect(env.Recover(ctx, r)).To(gomega.Succeed())
	g.Eventually(func() (*s3gwv1alpha1.S3GWRemediation, error) { return env.RemediationFor(ctx, victim) }).
		WithContext(ctx).WithTimeout(time.Minute).Should(gomega.BeNil(),
		"NodeHealthCheck deletes the CR once the node is healthy, and the manager lets it go")
	g.Eventually(func() []string {
		return labelValues(scrape(ctx, g, manager), "s3gw_remediation_remediation_phase", "remediation")
	}).WithContext(ctx).WithTimeout(30*time.Second).ShouldNot(gomega.ContainElement(path.Base(r.Remediation())),
		"the phase series goes with the CR")
}

// expectAlertSeries scrapes the manager and expects every metric the
// shipped alert rules read, with the label values they match on. It polls:
// the manager tells a transition's metrics right after the status write
// that the test saw.
func expectAlertSeries(ctx context.Context, t *testing.T, root string, manager *harness.OperatorProcess) {
	t.Helper()
	g := gomega.NewWithT(t)
	data, err := os.ReadFile(root + "/config/prometheus/prometheus_rule.yaml")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert, Expr string
				}
			}
		}
	}
	g.Expect(yaml.Unmarshal(data, &rule)).To(gomega.Succeed())
	names := regexp.MustCompile(`\b(s3gw_remediation_[a-z_]+|controller_runtime_[a-z_]+|leader_election_[a-z_]+)\b`)
	g.Eventually(func(g gomega.Gomega) {
		families := scrape(ctx, g, manager)
		exported := map[string]bool{}
		for name, f := range families {
			exported[name] = len(f.GetMetric()) > 0
		}
		for _, group := range rule.Spec.Groups {
			for _, r := range group.Rules {
				for _, name := range names.FindAllString(r.Expr, -1) {
					g.Expect(exported[name]).To(gomega.BeTrue(), "alert %s reads %s, which the manager does not export", r.Alert, name)
				}
			}
		}
		g.Expect(labelValues(families, "s3gw_remediation_remediation_phase", "phase")).To(gomega.ContainElement("Succeeded"))
		g.Expect(labelValues(families, "leader_election_master_status", "name")).To(gomega.ContainElement(harness.LeaderElectionID))
		for _, c := range []string{"s3gwremediation", "s3gwremediationtemplate", "s3gwremediationtemplate-protection"} {
			g.Expect(labelValues(families, "controller_runtime_reconcile_errors_total", "controller")).To(gomega.ContainElement(c),
				"S3GWRemediationReconcileErrors matches controller %s", c)
		}
		g.Expect(labelValues(families, "s3gw_remediation_remediations_total", "result")).To(gomega.ContainElement("Succeeded"))
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(gomega.Succeed())
}

func scrape(ctx context.Context, g gomega.Gomega, p *harness.OperatorProcess) map[string]*dtoFamily {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.MetricsURL(), nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return families
}

func labelValues(families map[string]*dtoFamily, metric, label string) []string {
	var out []string
	if f, ok := families[metric]; ok {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out = append(out, l.GetValue())
				}
			}
		}
	}
	return out
}

// expectPoliciesTypeCheck waits for kube-controller-manager to type-check
// the installed ValidatingAdmissionPolicies and expects no warning.
func expectPoliciesTypeCheck(ctx context.Context, t *testing.T, env *harness.Env) {
	t.Helper()
	g := gomega.NewWithT(t)
	shipped, err := testenv.ManagerPolicy()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	want := 0
	for _, obj := range shipped {
		if obj.GetKind() == "ValidatingAdmissionPolicy" {
			want++
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyList"})
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.List(ctx, list)).To(gomega.Succeed())
		var ours int
		for _, p := range list.Items {
			if !strings.HasPrefix(p.GetName(), "s3gw-remediation-") {
				continue
			}
			ours++
			gen, _, _ := unstructured.NestedInt64(p.Object, "status", "observedGeneration")
			g.Expect(gen).To(gomega.Equal(p.GetGeneration()), "%s is type-checked", p.GetName())
			warnings, _, _ := unstructured.NestedSlice(p.Object, "status", "typeChecking", "expressionWarnings")
			g.Expect(warnings).To(gomega.BeEmpty(), "%s", p.GetName())
		}
		g.Expect(ours).To(gomega.Equal(want), "every policy of config/policy is installed")
	}).WithContext(ctx).WithTimeout(time.Minute).Should(gomega.Succeed())
}

// templateReport reads the default template's protection report of pod.
func templateReport(ctx context.Context, env *harness.Env, namespace, pod string) (*s3gwv1alpha1.PodProtection, error) {
	var tmpl s3gwv1alpha1.S3GWRemediationTemplate
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: harness.ManagerNamespace, Name: defaultTemplate}, &tmpl); err != nil {
		return nil, err
	}
	for i, p := range tmpl.Status.Pods {
		if p.Namespace == namespace && p.Name == pod {
			return &tmpl.Status.Pods[i], nil
		}
	}
	return nil, nil
}
