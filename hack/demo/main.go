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

// Command demo shows s3gw-remediation on a local 3-node cluster with
// compressed timings: two s3gw gateways lose their nodes at the same moment;
// the one whose node a NodeHealthCheck watches is moved by the operator, the
// other is left to Kubernetes and stays stuck on its dead node's volume
// attachment. It prints both timelines live and side by side, exits 0 only
// if the remediated gateway recovered, and leaves nothing running.
//
//	go run ./hack/demo [-window 60s] [-logs DIR] [-external-nhc]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

const (
	nodeA, nodeB, nodeC = "node-a", "node-b", "node-c"
	// pool is the NodeHealthCheck's and the template's name and the value of
	// poolLabel on the nodes it watches.
	pool      = "s3gw"
	poolLabel = "demo.s3gw.io/nodehealthcheck"
	remedied  = "with s3gw-remediation"
	baseline  = "without (Kubernetes only)"
)

func main() {
	window := flag.Duration("window", 60*time.Second, "how long after the failure the unremediated gateway is watched")
	timeout := flag.Duration("timeout", 3*time.Minute, "how long the remediated gateway may take to recover")
	logDir := flag.String("logs", "", "keep the control-plane and controller logs in this directory")
	externalNHC := flag.Bool("external-nhc", false,
		"do not emulate NodeHealthCheck: wait for a real NHC operator run against the printed kubeconfig")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, *window, *timeout, *logDir, *externalNHC)
	stop()
	if ctx.Err() != nil && code != 0 {
		fmt.Println("Interrupted; everything is stopped.")
		code = 130
	}
	os.Exit(code)
}

type demo struct {
	env     *harness.Env
	out     io.Writer
	mu      sync.Mutex
	last    time.Time
	started time.Time
	// expectedRTO is the protection report's budget for the remediated gateway.
	expectedRTO time.Duration
}

func (d *demo) printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _ = fmt.Fprintf(d.out, format, args...)
	d.last = time.Now()
}

func run(ctx context.Context, window, timeout time.Duration, logDir string, externalNHC bool) int {
	d := &demo{out: os.Stdout, started: time.Now()}
	log, closeLog, err := harness.FileLogger(logDir, 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer closeLog()

	opts := harness.Options{Cluster: cluster.Compressed(), Logger: log, ExternalNHC: externalNHC,
		UnhealthyDuration: harness.ShippedUnhealthyDuration}
	if logDir != "" {
		opts.Cluster.LogDir = filepath.Join(logDir, "cluster")
	}
	c := opts.Cluster
	d.printf("s3gw-remediation demo on a local cluster (real etcd, kube-apiserver, kube-controller-manager,\n"+
		"kube-scheduler; kwok kubelets; simulated Longhorn).\n\n"+
		"TIMINGS ARE COMPRESSED: a lost node is NotReady after %s and its pods are evicted %ds later\n"+
		"(Kubernetes defaults: 50s and 300s). NodeHealthCheck remediates %s after NotReady, as the shipped\n"+
		"sample does (NHC's default: 300s). The attach-detach controller keeps its production clocks\n"+
		"(1m sync, 6m force detach).\n\n",
		c.NodeMonitorGracePeriod, c.DefaultUnreachableTolerationSeconds, harness.ShippedUnhealthyDuration)

	d.printf("Starting the cluster ...\n")
	env, err := harness.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "Starting the environment:", err)
		return 1
	}
	defer func() {
		d.printf("\nStopping the cluster ...\n")
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "Stopping:", err)
		}
		d.printf("Done in %s.\n", time.Since(d.started).Round(time.Second))
	}()
	d.env = env
	d.printf("Cluster up in %s: %s\n\n", time.Since(d.started).Round(100*time.Millisecond), env.Describe())

	gateways, err := d.setUp(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "Setting up:", err)
		return 1
	}
	if err := d.showProtection(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Reading the protection report:", err)
		return 1
	}
	if externalNHC {
		d.printf("NodeHealthCheck is NOT emulated. Run a real NHC operator against\n  KUBECONFIG=%s\n"+
			"(docs/local-cluster.md, \"Running a real NodeHealthCheck\"), then press Enter.\n", env.Cluster.KubeconfigPath)
		waitForEnter(ctx)
	}
	return d.failover(ctx, gateways, window, timeout)
}

// setUp adds three nodes in three zones and a gateway on each of the first
// two; only node-a and node-c are watched by the NodeHealthCheck.
func (d *demo) setUp(ctx context.Context) ([]*harness.Gateway, error) {
	env := d.env
	for _, n := range []struct {
		name    string
		watched bool
	}{{nodeA, true}, {nodeB, false}, {nodeC, true}} {
		labels := map[string]string{harness.ZoneLabel: "zone-" + strings.TrimPrefix(n.name, "node-")}
		if n.watched {
			labels[poolLabel] = pool
		}
		if err := env.AddNodes(ctx, labels, n.name); err != nil {
			return nil, err
		}
	}
	if _, err := env.EnableRemediation(ctx, harness.Remediation{
		Name: pool, NodeSelector: map[string]string{poolLabel: pool},
		// As the chart's default template: the gateways' images are kept
		// on the nodes their replacements may be scheduled to.
		PrePull: s3gwv1alpha1.PrePullSpec{Enabled: true},
	}); err != nil {
		return nil, err
	}
	d.printf("Nodes node-a, node-b, node-c are Ready. A NodeHealthCheck watches node-a and node-c and remediates\n" +
		"with the default S3GWRemediationTemplate (fencing evidence: Longhorn storage isolation;\n" +
		"release: ControllerDetach; s3gw's image pre-pulled where a replacement may go). node-b is not watched.\n\n")

	specs := []harness.GatewaySpec{
		// node-b fails too: a replica there would be one Longhorn cannot
		// stop, so the remediated gateway keeps its replica on node-c only.
		{Namespace: "s3gw", Release: "demo", Node: nodeA, Failover: []string{nodeC}, ReplicaNodes: []string{nodeC}},
		{Namespace: "s3gw-unremediated", Release: "demo", Node: nodeB, Failover: []string{nodeC}, ReplicaNodes: []string{nodeA, nodeC}},
	}
	var gateways []*harness.Gateway
	for _, s := range specs {
		g, err := env.DeployGateway(ctx, s)
		if err != nil {
			return nil, err
		}
		gateways = append(gateways, g)
		d.printf("s3gw gateway %s/%s Ready on %s, RWO Longhorn volume %s attached (replicas on %s).\n",
			g.Namespace, g.Deployment, s.Node, g.Volume.Name, strings.Join(s.ReplicaNodes, ", "))
	}
	return gateways, nil
}

// showProtection prints the template's protection report, as kubectl
// shows it, once it covers both gateways: will each survive its node's
// failure, and how fast.
func (d *demo) showProtection(ctx context.Context) error {
	key := client.ObjectKey{Namespace: harness.TemplateNamespace, Name: pool}
	t := &s3gwv1alpha1.S3GWRemediationTemplate{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := d.env.Client.Get(ctx, key, t); err != nil {
			return false, err
		}
		return len(t.Status.Pods) == 2 && allWarm(t.Status.Pods), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the protection report of both gateways, their candidate nodes warm: %w", err)
	}
	d.printf("\nBefore any failure, the operator reports whether each gateway would survive its node's failure now:\n\n")
	cmd, err := d.env.Cluster.Kubectl(ctx, "get", "s3gwremediationtemplates", "-n", key.Namespace)
	if err != nil {
		return err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl: %w: %s", err, out)
	}
	d.printf("$ kubectl get s3gwremediationtemplates -n %s\n%s\n", key.Namespace, out)
	d.printf("%-48s %-7s %-10s %-18s %-12s %s\n", "POD", "NODE", "PROTECTED", "REASON", "IMAGE WARM", "EXPECTED RTO / WHY")
	for _, p := range t.Status.Pods {
		detail := p.Message
		if p.Protected && p.ExpectedRTO != nil {
			detail = p.ExpectedRTO.Duration.String() + ", fenced by " + strings.Join(p.Evidence, ", ")
		}
		d.printf("%-48s %-7s %-10v %-18s %-12s %s\n", p.Namespace+"/"+p.Name, p.Node, p.Protected, p.Reason, warmth(p.Images),
			firstSentence(detail))
	}
	d.printf("(Each gateway is judged for its own node failing alone. IMAGE WARM: the nodes its replacement may be\n" +
		"scheduled to that hold its image, from the pre-pull pods the operator keeps there; a cold one would add a pull.)\n\n")
	for _, p := range t.Status.Pods {
		if p.Protected && p.ExpectedRTO != nil && p.Namespace == "s3gw" {
			d.expectedRTO = p.ExpectedRTO.Duration
		}
	}
	return nil
}

// allWarm reports whether the report has every pod's candidate nodes warm.
func allWarm(pods []s3gwv1alpha1.PodProtection) bool {
	for _, p := range pods {
		if p.Images == nil || p.Images.Reason != s3gwv1alpha1.ReasonAllCandidatesWarm {
			return false
		}
	}
	return true
}

// warmth is "<warm>/<candidates>" of a pod's candidate nodes.
func warmth(w *s3gwv1alpha1.ImageWarmth) string {
	if w == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", w.WarmNodes, w.CandidateNodes)
}

// firstSentence keeps a report message to what fits a line.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	return firstLine(s)
}

func (d *demo) failover(ctx context.Context, gateways []*harness.Gateway, window, timeout time.Duration) int {
	env := d.env
	titles := map[*harness.Gateway]string{gateways[0]: remedied, gateways[1]: baseline}
	d.printf("\nStopping the kubelets of node-a and node-b at the same moment (crash or power loss) ...\n\n")
	runs, err := env.FailAll(ctx, gateways, func(r *harness.Run, m harness.Milestone, after time.Duration) {
		d.printf("  %8s  %-26s %s%s\n", "+"+harness.FormatDuration(after), titles[r.Gateway], m, detail(r, m))
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "Failing the nodes:", err)
		return 1
	}
	fixed, stuck := runs[0], runs[1]

	progressDone := make(chan struct{})
	go d.progress(ctx, runs, progressDone)
	recovered := fixed.Wait(ctx, harness.ReplacementReady, timeout) == nil
	if ctx.Err() != nil {
		close(progressDone)
		return 1
	}
	// The unremediated gateway is watched for the whole window.
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(stuck.FailedAt.Add(window))):
	case <-stuck.Done(harness.ReplacementReady):
	}
	close(progressDone)
	if ctx.Err() != nil {
		return 1
	}

	d.printf("\nSide by side (time since the nodes were lost; — = not reached within %s):\n\n", window)
	d.printf("%s\n", harness.CompareTimelines([]string{remedied, baseline}, runs))
	d.explainRemediated(ctx, fixed, recovered)
	d.explainStuck(ctx, stuck, window)

	if !recovered {
		d.printf("\nFAILED: the remediated gateway did not recover within %s.\n", timeout)
		return 1
	}
	d.printf("\nThe remediated gateway served again %s after its node was lost; the protection report expected at most %s\n"+
		"(compressed timings; with Kubernetes defaults add %s of NotReady detection; NodeHealthCheck waits the shipped %s either way).\n",
		seen(fixed, harness.ReplacementReady), d.expectedRTO,
		cluster.KubernetesDefaults().NodeMonitorGracePeriod-d.env.Cluster.Options().NodeMonitorGracePeriod, harness.ShippedUnhealthyDuration)
	return 0
}

// progress prints what each run waits for whenever nothing happened for a
// few seconds.
func (d *demo) progress(ctx context.Context, runs []*harness.Run, done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-tick.C:
		}
		d.mu.Lock()
		quiet := time.Since(d.last) >= 5*time.Second
		d.mu.Unlock()
		if !quiet {
			continue
		}
		var parts []string
		for i, r := range runs {
			title := []string{"remediated", "unremediated"}[i]
			parts = append(parts, title+": "+waitingFor(r))
		}
		d.printf("  %8s  … %s\n", "+"+harness.FormatDuration(time.Since(runs[0].FailedAt)), strings.Join(parts, "; "))
	}
}

func waitingFor(r *harness.Run) string {
	if _, ok := r.Seen(harness.ReplacementReady); ok {
		return "recovered"
	}
	if _, ok := r.Seen(harness.ReplacementScheduled); ok {
		return "replacement waiting for the volume"
	}
	if _, ok := r.Seen(harness.OldPodTerminating); ok {
		return "old pod Terminating"
	}
	if _, ok := r.Seen(harness.NodeNotReady); ok {
		return "node NotReady, pod still bound to it"
	}
	return "waiting for the node to be declared NotReady"
}

func detail(r *harness.Run, m harness.Milestone) string {
	switch m {
	case harness.RemediationCreated:
		return " (" + r.Remediation() + ", by NodeHealthCheck)"
	case harness.ReplacementReady:
		if pod, node := r.Replacement(); pod != "" {
			return " (" + pod + " on " + node + ")"
		}
	}
	return ""
}

func seen(r *harness.Run, m harness.Milestone) string {
	if d, ok := r.Seen(m); ok {
		return harness.FormatDuration(d)
	}
	return "never"
}

func (d *demo) explainRemediated(ctx context.Context, r *harness.Run, recovered bool) {
	rem, err := d.env.RemediationFor(ctx, r.Node)
	if err != nil || rem == nil {
		d.printf("With remediation: no S3GWRemediation found for %s (%v).\n", r.Node, err)
		return
	}
	d.printf("With remediation: S3GWRemediation %s/%s is %s; fencing evidence %v;\n"+
		"  the operator force-deleted the old pod and removed the volume from %s's status.volumesInUse,\n"+
		"  so the attach-detach controller detached it at once and attached it to the replacement.\n",
		rem.Namespace, rem.Name, rem.Status.Phase, rem.Status.FencingEvidence, r.Node)
	if !recovered {
		d.printf("  Timeline:\n%s", r.Format())
	}
}

// explainStuck shows, from the API, why the unremediated gateway is down.
func (d *demo) explainStuck(ctx context.Context, r *harness.Run, window time.Duration) {
	if _, ok := r.Seen(harness.ReplacementReady); ok {
		d.printf("Without remediation: the gateway recovered within the window (unexpected).\n")
		return
	}
	c := d.env.Client
	var va storagev1.VolumeAttachment
	vaState := "gone"
	if err := c.Get(ctx, client.ObjectKey{Name: attachrules.AttachmentName(r.Gateway.Volume.Name, r.Node)}, &va); err == nil {
		vaState = fmt.Sprintf("still there (attached=%v)", va.Status.Attached)
	}
	var old corev1.Pod
	oldState := "gone"
	if err := c.Get(ctx, r.OldPod, &old); err == nil {
		oldState = "still in the API"
		if !old.DeletionTimestamp.IsZero() {
			oldState = fmt.Sprintf("Terminating since %s, never completes (its kubelet is dead)",
				old.DeletionTimestamp.Format(time.TimeOnly))
		}
	}
	blocked := ""
	var events corev1.EventList
	if err := c.List(ctx, &events, client.InNamespace(r.Gateway.Namespace)); err == nil {
		for _, ev := range events.Items {
			if ev.Reason == "FailedAttachVolume" && ev.InvolvedObject.Kind == "Pod" {
				blocked = fmt.Sprintf("%s: %s", ev.InvolvedObject.Name, firstLine(ev.Message))
			}
		}
	}
	d.printf("\nWithout remediation, %s after the failure:\n"+
		"  old pod %s: %s\n"+
		"  VolumeAttachment of %s on %s: %s\n",
		window, r.OldPod.Name, oldState, r.Gateway.Volume.Name, r.Node, vaState)
	if blocked != "" {
		d.printf("  replacement blocked: FailedAttachVolume %s\n", blocked)
	}
	d.printf("  Kubernetes never deletes a pod whose kubelet is gone, so the RWO volume stays attached to the\n" +
		"  dead node until it comes back; even after someone force-deletes the pod, the attach-detach\n" +
		"  controller waits 6 minutes before force-detaching (maxWaitForUnmountDuration).\n")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

func waitForEnter(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		_, _ = fmt.Fscanln(os.Stdin)
		close(done)
	}()
	select {
	case <-ctx.Done():
	case <-done:
	}
}
