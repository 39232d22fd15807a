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

package cluster

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// TestNodeFailureAndRecovery boots a compressed cluster, runs a pod on a
// simulated node, fails the node and watches the real node-lifecycle
// controller give up on it, then brings it back.
func TestNodeFailureAndRecovery(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	began := time.Now()
	c, err := Start(ctx, Compressed())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { assertStopLeavesNoProcess(t, c) })
	t.Logf("Cluster ready in %s (%s)", time.Since(began).Round(time.Millisecond), c.Describe())

	for _, n := range []string{"node-a", "node-b"} {
		if err := c.AddNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}

	pod := runPausePod(ctx, t, c, "node-a")
	t.Logf("Pod %s Running and Ready on node-a", pod)

	failedAt := time.Now()
	if err := c.FailNode(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	grace := c.Options().NodeMonitorGracePeriod
	if err := c.WaitForNode(ctx, "node-a", grace+30*time.Second, NodeUnreachable); err != nil {
		t.Fatal(err)
	}
	detected := time.Since(failedAt)
	t.Logf("Node node-a unreachable-tainted %s after its heartbeats stopped (%s)", detected.Round(time.Millisecond), c.Describe())
	if detected < grace/2 {
		t.Errorf("node marked unreachable after %s, before the grace period %s could have run out", detected, grace)
	}

	var healthy corev1.Node
	if err := c.Client().Get(ctx, client.ObjectKey{Name: "node-b"}, &healthy); err != nil {
		t.Fatal(err)
	}
	if !NodeReady(&healthy) {
		t.Errorf("node-b lost readiness while only node-a failed: %v", healthy.Status.Conditions)
	}
	expectKwokFenced(ctx, t, c, "node-a", "node-b")

	if err := c.RecoverNode(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForNode(ctx, "node-a", 30*time.Second, func(n *corev1.Node) bool {
		return NodeReady(n) && !hasTaint(n, corev1.TaintNodeUnreachable)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestContextCancelStopsCluster proves that cancelling Start's context is
// enough to leave nothing behind.
func TestContextCancelStopsCluster(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	c, err := Start(ctx, Compressed())
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pids := c.processIDs()
	cancel()
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 2*stopGrace, true, func(context.Context) (bool, error) {
		return len(livingProcesses(pids)) == 0, nil
	}); err != nil {
		t.Fatalf("processes %v still alive after the context was cancelled", livingProcesses(pids))
	}
}

func runPausePod(ctx context.Context, t *testing.T, c *Cluster, nodeName string) string {
	t.Helper()
	labels := map[string]string{"app": "pause"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pause", Namespace: corev1.NamespaceDefault},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelHostname: nodeName},
					Containers:   []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
				},
			},
		},
	}
	if err := c.Client().Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	var name string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := c.Client().List(ctx, &pods, client.InNamespace(dep.Namespace), client.MatchingLabels(labels)); err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && workloads.PodReady(&p) && p.Spec.NodeName == nodeName {
				name = p.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Ready pause pod on %s: %v", nodeName, err)
	}
	return name
}

// assertStopLeavesNoProcess stops the cluster and checks that no component
// process, nor anything in their process groups, survives.
func assertStopLeavesNoProcess(t *testing.T, c *Cluster) {
	t.Helper()
	pids := c.processIDs()
	if err := c.Stop(); err != nil {
		t.Error(err)
	}
	if alive := livingProcesses(pids); len(alive) > 0 {
		t.Errorf("processes %v survived Stop", alive)
	}
	if _, err := os.Stat(c.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cluster directory %s survived Stop: %v", c.dir, err)
	}
}

// livingProcesses returns the components whose process group still has a
// running member.
func livingProcesses(pgids []int) []int {
	var alive []int
	for _, pgid := range pgids {
		if len(runningInGroup(pgid)) > 0 {
			alive = append(alive, pgid)
		}
	}
	return alive
}

// TestRestartComponentsKeepsStateAndCredentials kills kube-apiserver and
// etcd, brings them back, and checks that the data, a ServiceAccount's
// token and the audit log survive, and that the killed processes are gone.
func TestRestartComponentsKeepsStateAndCredentials(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	opts := Compressed()
	opts.AuditPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n" +
		"- level: Metadata\n  users: [\"system:serviceaccount:default:tester\"]\n- level: None\n"
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { assertStopLeavesNoProcess(t, c) })

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: corev1.NamespaceDefault, Name: "survivor"}, Data: map[string]string{"k": "v"}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: corev1.NamespaceDefault, Name: "tester"}}
	for _, obj := range []client.Object{cm, sa} {
		if err := c.Client().Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig, err := c.ServiceAccountKubeconfig(ctx, sa.Namespace, sa.Name)
	if err != nil {
		t.Fatal(err)
	}
	whoami := func() string {
		t.Helper()
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		saClient, err := client.New(cfg, client.Options{Scheme: c.Client().Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		review := &authenticationv1.SelfSubjectReview{}
		if err := saClient.Create(ctx, review); err != nil {
			t.Fatal(err)
		}
		return review.Status.UserInfo.Username
	}
	if got := whoami(); got != "system:serviceaccount:default:tester" {
		t.Fatalf("the ServiceAccount kubeconfig authenticates as %q", got)
	}

	before := c.processIDs()
	down, err := c.RestartComponents(ctx, 500*time.Millisecond, APIServer, Etcd)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver and etcd unavailable for %s", down.Round(time.Millisecond))
	if down < 500*time.Millisecond {
		t.Errorf("unavailable for %s, less than the downtime asked for", down)
	}
	after := c.processIDs()
	for i, name := range []string{Etcd, APIServer} {
		if before[i] == after[i] || len(livingProcesses(before[i:i+1])) > 0 {
			t.Errorf("%s: process %d not replaced (now %d) or still alive", name, before[i], after[i])
		}
	}
	got := &corev1.ConfigMap{}
	if err := c.Client().Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil || got.Data["k"] != "v" {
		t.Errorf("ConfigMap after the restart: %v, %v", got.Data, err)
	}
	if got := whoami(); got != "system:serviceaccount:default:tester" {
		t.Errorf("after the restart the token authenticates as %q", got)
	}
	audit, err := os.ReadFile(c.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(audit), `"resource":"selfsubjectreviews"`); n != 2 {
		t.Errorf("audit log holds %d SelfSubjectReviews of the ServiceAccount, want 2 (one before, one after the restart)", n)
	}
}

// expectKwokFenced checks the admission policy of kwok_fence.go: kwok's
// identity may no longer write the failed node, its metadata or its
// status, and still writes a live one.
func expectKwokFenced(ctx context.Context, t *testing.T, c *Cluster, failed, live string) {
	t.Helper()
	cfg, err := c.RESTConfigFor(kwokUser)
	if err != nil {
		t.Fatal(err)
	}
	kwok, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	annotate := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"kwok-fence-probe":"1"}}}`))
	ready := client.RawPatch(types.StrategicMergePatchType, []byte(`{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`))
	for _, w := range []struct {
		what  string
		write func(*corev1.Node) error
	}{
		{"annotate", func(n *corev1.Node) error { return kwok.Patch(ctx, n, annotate) }},
		{"mark Ready", func(n *corev1.Node) error { return kwok.Status().Patch(ctx, n, ready) }},
	} {
		err := w.write(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: failed}})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "its simulated kubelet writes nothing") {
			t.Errorf("kwok's %s of failed %s: %v, want refused by %s", w.what, failed, err, kwokFenceName)
		}
	}
	if err := kwok.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: live}}, annotate); err != nil {
		t.Errorf("kwok's write of live %s refused: %v", live, err)
	}
}
