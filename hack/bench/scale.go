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
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// The scale benchmark fails many gateway nodes of a large cluster at once
// and measures the operator, built from ./cmd/manager and run as its own
// process: per remediation CR → Ready, whether every gateway was replaced,
// the manager's peak RSS, heap and CPU seconds, and its API requests. It
// runs once per cluster size (-nodes, with -pods-per-node pods each, or
// every count in -pods), each in a fresh cluster with a fresh manager, so
// that the peak RSS of each is its own; two node counts give the cost per
// node. The manager's heap profile, taken before the failures and at its
// RSS peak, says who holds the memory (heap.go).
//
// Every gateway has its own RWO volume with replicas on its two failover
// nodes; the failing gateway nodes are spread over the zones, far below
// the node-lifecycle controller's disruption threshold (55 %) and
// NodeHealthCheck's minHealthy (51 %). The rest of the pods are pause pods
// of filler Deployments, spread by the scheduler.

type scaleConfig struct {
	gateways, fail, zones int
	sizes                 []clusterSize
	nhcDuration           time.Duration
	parallel              int
	out, logDir, note     string
	// prePull is the template's spec.prePull.enabled, as in the shipped
	// default template: one pre-pull pod per gateway and candidate node.
	prePull bool
}

func scaleMain(ctx context.Context, args []string) error {
	var cfg scaleConfig
	var nodes, pods string
	var podsPerNode float64
	fs := flag.NewFlagSet("scale", flag.ExitOnError)
	fs.StringVar(&nodes, "nodes", "1000,3000", "comma-separated simulated node counts, one run each")
	fs.Float64Var(&podsPerNode, "pods-per-node", 1.1, "pods of the cluster per node (gateways plus filler pods), unless -pods")
	fs.IntVar(&cfg.gateways, "gateways", 100, "s3gw gateways, each on its own RWO volume and node")
	fs.IntVar(&cfg.fail, "fail", 20, "gateway nodes failed at once")
	fs.BoolVar(&cfg.prePull, "prepull", true, "pre-pull the gateways' images on their candidate nodes (spec.prePull, as the default template)")
	fs.IntVar(&cfg.zones, "zones", 10, "zones the nodes are spread over")
	fs.StringVar(&pods, "pods", "", "comma-separated pod counts of the cluster (gateways plus filler pods), one run each per node count")
	fs.DurationVar(&cfg.nhcDuration, "nhc-duration", shippedNHCDuration, "NodeHealthCheck unhealthy duration")
	fs.IntVar(&cfg.parallel, "parallel", 16, "concurrent setup operations")
	fs.StringVar(&cfg.out, "out", "", "result directory (default bench/results/<date>-scale-<nodes>, e.g. 2026-12-04-scale-1000-3000)")
	fs.StringVar(&cfg.logDir, "logs", "", "keep control-plane, manager and controller logs in this directory")
	fs.StringVar(&cfg.note, "note", "", "a note on the code measured, for results.md")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if cfg.sizes, err = clusterSizes(nodes, pods, podsPerNode, cfg.gateways); err != nil {
		return err
	}
	for _, size := range cfg.sizes {
		if cfg.fail > cfg.gateways || 3*cfg.gateways > size.Nodes {
			return fmt.Errorf("need -fail ≤ -gateways and 3 nodes per gateway (its own and two failover nodes)")
		}
	}

	began := time.Now()
	load, err := startMachineLoad()
	if err != nil {
		return err
	}
	res := &scaleResult{Args: commandLine(args), Started: began, Gateways: cfg.gateways, Fail: cfg.fail,
		Zones: cfg.zones, NHCDuration: cfg.nhcDuration}
	profiles := map[string]string{}
	for _, size := range cfg.sizes {
		sr, err := runScale(ctx, cfg, size, profiles)
		if err != nil {
			return fmt.Errorf("run with %s: %w", size, err)
		}
		res.Runs = append(res.Runs, sr)
	}
	res.Wall = time.Since(began)
	res.Machine, res.measuredCode = machineDescription(load), measureCode(cfg.note)
	out, err := resultDir(cfg.out, began, scaleName(cfg.sizes))
	if err != nil {
		return err
	}
	if err := writeResults(out, "scale.json", res, res.markdown(), profiles); err != nil {
		return err
	}
	fmt.Print("\n" + res.table())
	fmt.Printf("\nWrote %s (results.md, scale.json, heap profiles) in %s.\n", out, res.Wall.Round(time.Second))
	return nil
}

// clusterSize is the nodes and pods of one run.
type clusterSize struct {
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
}

func (c clusterSize) String() string { return fmt.Sprintf("%d nodes, %d pods", c.Nodes, c.Pods) }

// clusterSizes is a run per node count, with podsPerNode pods per node, or
// with each of the pod counts if any are given.
func clusterSizes(nodes, pods string, podsPerNode float64, gateways int) ([]clusterSize, error) {
	counts := func(list, what string, least int) ([]int, error) {
		var out []int
		for _, f := range strings.Split(list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < least {
				return nil, fmt.Errorf("invalid %s count %q: want a number of at least %d", what, f, least)
			}
			out = append(out, n)
		}
		return out, nil
	}
	nodeCounts, err := counts(nodes, "node", 1)
	if err != nil {
		return nil, err
	}
	var podCounts []int
	if pods != "" {
		if podCounts, err = counts(pods, "pod", gateways); err != nil {
			return nil, err
		}
	}
	var sizes []clusterSize
	for _, n := range nodeCounts {
		if podCounts == nil {
			sizes = append(sizes, clusterSize{Nodes: n, Pods: max(gateways, int(math.Round(float64(n)*podsPerNode)))})
		}
		for _, p := range podCounts {
			sizes = append(sizes, clusterSize{Nodes: n, Pods: p})
		}
	}
	return sizes, nil
}

// scaleName names a scale result by its node counts: scale-1000-3000.
func scaleName(sizes []clusterSize) string {
	name := "scale"
	for i, s := range sizes {
		if i == 0 || s.Nodes != sizes[i-1].Nodes {
			name += "-" + strconv.Itoa(s.Nodes)
		}
	}
	return name
}

// scaleResult is what the scale benchmark measured, as written to scale.json.
type scaleResult struct {
	measuredCode

	Args        string        `json:"args"`
	Machine     string        `json:"machine"`
	Started     time.Time     `json:"started"`
	Wall        time.Duration `json:"wallNanoseconds"`
	Gateways    int           `json:"gateways"`
	Fail        int           `json:"fail"`
	Zones       int           `json:"zones"`
	NHCDuration time.Duration `json:"nhcDurationNanoseconds"`
	Runs        []scaleRun    `json:"runs"`
}

// scaleRun is one cluster size.
type scaleRun struct {
	Settings string `json:"settings"`
	clusterSize
	// Setup is how long building the cluster took.
	Setup       time.Duration `json:"setupNanoseconds"`
	AttachDelay time.Duration `json:"attachDelayNanoseconds"`
	Replaced    int           `json:"replaced"`
	Succeeded   int           `json:"succeeded"`
	// CRToReady is, per remediation, S3GWRemediation created → replacement
	// Ready; RTO is node lost → replacement Ready (seconds).
	CRToReady stats `json:"crToReady"`
	RTO       stats `json:"rto"`
	// CRToReleased is S3GWRemediation created → no VolumeAttachment of the
	// volume left on the dead node, split at the operator's writes
	// (operatorwrites.go). CRToReleaseWrite ends it at the release write:
	// the operator, with the simulated Longhorn's replica stops it waits
	// for; ReleaseWriteToReleased is the rest, kube-controller-manager's
	// detach. CRToReleaseWrite is itself CRToTicketRemoval (the operator),
	// TicketRemovalToForceDelete (the simulated Longhorn stops the engine
	// and replicas, the operator sees it) and ForceDeleteToReleaseWrite
	// (the operator).
	CRToReleased               stats `json:"crToReleased"`
	CRToReleaseWrite           stats `json:"crToReleaseWrite"`
	ReleaseWriteToReleased     stats `json:"releaseWriteToReleased"`
	CRToTicketRemoval          stats `json:"crToTicketRemoval"`
	TicketRemovalToForceDelete stats `json:"ticketRemovalToForceDelete"`
	ForceDeleteToReleaseWrite  stats `json:"forceDeleteToReleaseWrite"`
	// NotReadyToCR is node NotReady → S3GWRemediation created: the
	// NodeHealthCheck's share. CRToPodGone is S3GWRemediation created →
	// old pod gone: the operator's first write, before the attach-detach
	// controller's part of CRToReleased.
	NotReadyToCR stats `json:"notReadyToCR"`
	CRToPodGone  stats `json:"crToPodGone"`
	// NHCPasses are the NodeHealthCheck's reconcile passes from the first
	// failure until every remediation Succeeded (seconds each), and
	// NHCCRLists their live LISTs of remediation CRs per pass: NHC runs one
	// pass at a time, so a node that turns unhealthy waits for the pass
	// under way and for the next to reach it.
	NHCPasses  stats       `json:"nhcPasses"`
	NHCCRLists stats       `json:"nhcCRListsPerPass"`
	Failures   []runResult `json:"failures"`
	// Manager usage: when setup ended, before the failures (after the idle
	// window: steady state), and at the end.
	SetUp  cluster.Usage `json:"setUp"`
	Before cluster.Usage `json:"before"`
	After  cluster.Usage `json:"after"`
	// Heap is the manager's heap before the failures and at its RSS peak.
	Heap []heapSnapshot `json:"heap"`
	// RSS samples the manager's resident set every second, from its start.
	RSS []rssSample `json:"rss"`
	// Requests are the manager's API requests from the first failure until
	// every remediation Succeeded; Idle those of the minute before.
	Requests    apiaudit.Count `json:"requests"`
	Idle        apiaudit.Count `json:"idle"`
	IdleWindow  time.Duration  `json:"idleWindowNanoseconds"`
	FailureSpan time.Duration  `json:"failureSpanNanoseconds"`
}

type rssSample struct {
	At   float64 `json:"at"`
	RSS  int64   `json:"rssBytes"`
	Anon int64   `json:"rssAnonBytes"`
}

const (
	scalePool       = "scale"
	scaleNamespace  = "s3gw"
	fillerNamespace = "filler"
	fillerPerDeploy = 100
	idleWindow      = 30 * time.Second
)

func runScale(ctx context.Context, cfg scaleConfig, size clusterSize, profiles map[string]string) (scaleRun, error) {
	began := time.Now()
	sr := scaleRun{clusterSize: size, IdleWindow: idleWindow}
	tag := fmt.Sprintf("[%d nodes]", size.Nodes)
	log, closeLog, err := harness.FileLogger(logDirFor(cfg.logDir, size), 0)
	if err != nil {
		return sr, err
	}
	defer closeLog()
	opts := harness.Options{Cluster: cluster.KubernetesDefaults(), Logger: log, AuditLog: true, OperatorProcess: true,
		UnhealthyDuration: cfg.nhcDuration}
	if cfg.logDir != "" {
		opts.Cluster.LogDir = filepath.Join(logDirFor(cfg.logDir, size), "cluster")
	}
	fmt.Printf("%s Starting the cluster and the manager process ...\n", tag)
	env, err := harness.Start(ctx, opts)
	if err != nil {
		return sr, err
	}
	defer stopEnv(env)
	sr.Settings, sr.AttachDelay = env.Describe(), env.Sim.Options().AttachDelay
	fmt.Println(sr.Settings)

	sampler := sampleRSS(ctx, env.Manager)
	gateways, check, err := setUpScale(ctx, env, cfg, size)
	if err != nil {
		sampler.stop()
		return sr, err
	}
	sr.Setup = time.Since(began)
	if sr.SetUp, err = env.Manager.Usage(); err != nil {
		sampler.stop()
		return sr, err
	}
	fmt.Printf("%s %d nodes, %d gateways and %d filler pods ready after %s; counting the idle manager for %s ...\n",
		tag, size.Nodes, cfg.gateways, size.Pods-cfg.gateways, sr.Setup.Round(time.Second), idleWindow)
	if sr.Idle, err = countWindow(ctx, env, idleWindow); err != nil {
		sampler.stop()
		return sr, err
	}
	if sr.Before, err = env.Manager.Usage(); err != nil {
		sampler.stop()
		return sr, err
	}
	before, err := sampler.snapshot(ctx, "before the failures")
	if err != nil {
		sampler.stop()
		return sr, err
	}

	fmt.Printf("%s Failing %d gateway nodes at once ...\n", tag, cfg.fail)
	runs, err := env.FailAll(ctx, gateways[:cfg.fail], nil)
	if err != nil {
		sampler.stop()
		return sr, err
	}
	timeout := opts.Cluster.NodeMonitorGracePeriod + cfg.nhcDuration + failureWindow(size.Nodes)
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() { _ = r.Wait(ctx, harness.RemediationSucceeded, timeout) })
	}
	wg.Wait()
	end := time.Now()
	sr.FailureSpan = end.Sub(runs[0].FailedAt)
	if err := sleep(ctx, settle); err != nil {
		sampler.stop()
		return sr, err
	}
	var peak *heapSnapshot
	sr.RSS, peak = sampler.stop(), sampler.peak
	if sr.After, err = env.Manager.Usage(); err != nil {
		return sr, err
	}
	if sr.Requests, err = env.OperatorRequests(runs[0].FailedAt, end); err != nil {
		return sr, err
	}
	writes, err := readOperatorWrites(env, runs)
	if err != nil {
		return sr, err
	}
	sr.summarize(runs, writes)
	sr.NHCPasses, sr.NHCCRLists = passStats(check.Passes(), runs[0].FailedAt, end)
	for _, h := range []*heapSnapshot{before, peak} {
		if h == nil {
			continue
		}
		h.File = fmt.Sprintf("heap-%dnodes-%s.pb.gz", size.Nodes, strings.Fields(h.Label)[0])
		profiles[h.File] = string(h.profile)
		sr.Heap = append(sr.Heap, *h)
	}
	fmt.Printf("%s %d/%d replaced, CR → released p99 %s, CR → Ready p50 %s p99 %s, manager peak RSS %s, CPU %s, %d requests\n",
		tag, sr.Replaced, cfg.fail, fmtStat(sr.CRToReleased.P99), fmtStat(sr.CRToReady.P50), fmtStat(sr.CRToReady.P99),
		mib(sr.After.PeakRSS), sr.After.CPU.Round(10*time.Millisecond), sr.Requests.Total)
	for _, h := range sr.Heap {
		fmt.Printf("%s heap %s (RSS %s, heap in use %s, live %s), top owners:\n%s", tag, h.Label, mib(h.RSS),
			mib(h.HeapInuse), mib(h.Live), h.topOwners(8))
	}
	return sr, nil
}

func logDirFor(logDir string, size clusterSize) string {
	if logDir == "" {
		return ""
	}
	return filepath.Join(logDir, fmt.Sprintf("nodes-%d-pods-%d", size.Nodes, size.Pods))
}

func (sr *scaleRun) summarize(runs []*harness.Run, writes map[string]writeTimes) {
	var crToReady, rto, crToReleased, notReadyToCR, crToPodGone []float64
	var crToWrite, writeToReleased, crToTicket, ticketToDelete, deleteToWrite []float64
	for _, r := range runs {
		if d, ok := r.Between(harness.NodeNotReady, harness.RemediationCreated); ok {
			notReadyToCR = append(notReadyToCR, d.Seconds())
		}
		if d, ok := r.Between(harness.RemediationCreated, harness.OldPodGone); ok {
			crToPodGone = append(crToPodGone, d.Seconds())
		}
		rr := runResult{Node: r.Node, Milestones: map[string]float64{}}
		for _, e := range r.Timeline() {
			rr.Milestones[e.Milestone.String()] = e.After.Seconds()
		}
		// On the timeline's scale: time since the node was lost.
		step, _ := r.WallClockStep(harness.RemediationCreated)
		rr.WallClockStep = step.Seconds()
		var after [operatorWriteCount]time.Duration
		var found [operatorWriteCount]bool
		for w, at := range writes[r.Node] {
			if !at.IsZero() {
				after[w], found[w] = onTimeline(at, r.FailedAt, step), true
				rr.Milestones[operatorWrite(w).milestone()] = after[w].Seconds()
			}
		}
		created, crSeen := r.Seen(harness.RemediationCreated)
		released, releasedSeen := r.Seen(harness.AttachmentReleased)
		between := func(out *[]float64, ok bool, from, to time.Duration) {
			if ok {
				*out = append(*out, (to - from).Seconds())
			}
		}
		between(&crToWrite, crSeen && found[releaseWrite], created, after[releaseWrite])
		between(&writeToReleased, releasedSeen && found[releaseWrite], after[releaseWrite], released)
		between(&crToTicket, crSeen && found[ticketRemoval], created, after[ticketRemoval])
		between(&ticketToDelete, found[ticketRemoval] && found[forceDelete], after[ticketRemoval], after[forceDelete])
		between(&deleteToWrite, found[forceDelete] && found[releaseWrite], after[forceDelete], after[releaseWrite])

		ready, ok := r.Seen(harness.ReplacementReady)
		rr.Recovered = ok
		_, rr.ReplacementNode = r.Replacement()
		if _, ok := r.Seen(harness.RemediationSucceeded); ok {
			sr.Succeeded++
		}
		sr.Failures = append(sr.Failures, rr)
		if d, ok := r.Between(harness.RemediationCreated, harness.AttachmentReleased); ok {
			crToReleased = append(crToReleased, d.Seconds())
		} else {
			crToReleased = append(crToReleased, math.Inf(1))
		}
		if !ok {
			crToReady, rto = append(crToReady, math.Inf(1)), append(rto, math.Inf(1))
			continue
		}
		sr.Replaced++
		rto = append(rto, ready.Seconds())
		if d, ok := r.Between(harness.RemediationCreated, harness.ReplacementReady); ok {
			crToReady = append(crToReady, d.Seconds())
		}
	}
	sr.CRToReady, sr.RTO, sr.CRToReleased = newStats(crToReady), newStats(rto), newStats(crToReleased)
	sr.NotReadyToCR, sr.CRToPodGone = newStats(notReadyToCR), newStats(crToPodGone)
	sr.CRToReleaseWrite, sr.ReleaseWriteToReleased = newStats(crToWrite), newStats(writeToReleased)
	sr.CRToTicketRemoval, sr.TicketRemovalToForceDelete = newStats(crToTicket), newStats(ticketToDelete)
	sr.ForceDeleteToReleaseWrite = newStats(deleteToWrite)
}

// readOperatorWrites reads the operator's writes for the failed gateways
// from kube-apiserver's audit log.
func readOperatorWrites(env *harness.Env, runs []*harness.Run) (map[string]writeTimes, error) {
	reqs, err := apiaudit.Read(env.Cluster.AuditLogPath(), operatorWriteRequest)
	if err != nil {
		return nil, err
	}
	failures := make([]failedGateway, 0, len(runs))
	for _, r := range runs {
		failures = append(failures, failedGatewayOf(r))
	}
	return operatorWrites(reqs, failures), nil
}

// failureWindow is how long, after NotReady and the NodeHealthCheck's
// duration, the failed gateways have to be replaced: five minutes per
// thousand nodes, at least five. NodeHealthCheck's passes grow with the
// node count (one live LIST of remediation CRs per healthy node), and at
// 3 000 nodes on two cores one took 227 s, so a node that turns unhealthy
// during a pass waits up to two of them for its CR.
func failureWindow(nodes int) time.Duration {
	return max(5*time.Minute, time.Duration(nodes)*5*time.Minute/1000)
}

// passStats are the durations (seconds) and live CR LISTs of the
// NodeHealthCheck's passes that began from..to.
func passStats(passes []nhc.Pass, from, to time.Time) (took, lists stats) {
	var secs, counts []float64
	for _, p := range passes {
		if !p.Began.Before(from) && p.Began.Before(to) {
			secs, counts = append(secs, p.Took.Seconds()), append(counts, float64(p.CRLists))
		}
	}
	return newStats(secs), newStats(counts)
}

// setUpScale adds the nodes, the NodeHealthCheck, the gateways and the
// filler pods, and returns the gateways in node order and the
// NodeHealthCheck's emulator.
func setUpScale(ctx context.Context, env *harness.Env, cfg scaleConfig, size clusterSize) ([]*harness.Gateway, *nhc.Emulator, error) {
	check, err := env.EnableRemediation(ctx, harness.Remediation{
		Name: scalePool, NodeSelector: map[string]string{poolLabel: scalePool},
		PrePull: s3gwv1alpha1.PrePullSpec{Enabled: cfg.prePull},
	})
	if err != nil {
		return nil, nil, err
	}
	nodes := make([]int, size.Nodes)
	for i := range nodes {
		nodes[i] = i
	}
	began := time.Now()
	err = parallel(ctx, cfg.parallel, nodes, func(ctx context.Context, i int) error {
		return env.AddNodes(ctx, map[string]string{poolLabel: scalePool, harness.ZoneLabel: fmt.Sprintf("zone-%d", i%cfg.zones)}, nodeName(i))
	})
	if err != nil {
		return nil, nil, err
	}
	fmt.Printf("  %d nodes Ready in %s\n", size.Nodes, time.Since(began).Round(time.Second))

	began = time.Now()
	gateways := make([]*harness.Gateway, cfg.gateways)
	err = parallel(ctx, cfg.parallel, nodes[:cfg.gateways], func(ctx context.Context, i int) error {
		failover := []string{nodeName(i + cfg.gateways), nodeName(i + 2*cfg.gateways)}
		var err error
		gateways[i], err = env.DeployGateway(ctx, harness.GatewaySpec{
			Namespace: scaleNamespace, Release: fmt.Sprintf("s3gw-%03d", i),
			Node: nodeName(i), Failover: failover, ReplicaNodes: failover,
		})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	fmt.Printf("  %d gateways Ready in %s\n", cfg.gateways, time.Since(began).Round(time.Second))

	began = time.Now()
	if err := deployFiller(ctx, env, size.Pods-cfg.gateways); err != nil {
		return nil, nil, err
	}
	fmt.Printf("  %d filler pods Running in %s\n", size.Pods-cfg.gateways, time.Since(began).Round(time.Second))
	return gateways, check, nil
}

func nodeName(i int) string { return fmt.Sprintf("node-%04d", i) }

// deployFiller runs n pause pods in Deployments of at most fillerPerDeploy
// replicas and waits until all run.
func deployFiller(ctx context.Context, env *harness.Env, n int) error {
	if n == 0 {
		return nil
	}
	if err := env.Cluster.CreateNamespace(ctx, fillerNamespace); err != nil {
		return err
	}
	for i := 0; i*fillerPerDeploy < n; i++ {
		name := fmt.Sprintf("filler-%02d", i)
		labels := map[string]string{"app": name}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: fillerNamespace, Name: name},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(min(fillerPerDeploy, n-i*fillerPerDeploy))),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
				},
			},
		}
		if err := env.Client.Create(ctx, dep); err != nil {
			return fmt.Errorf("creating Deployment %s: %w", name, err)
		}
	}
	// On two cores 3 000 pods on 3 000 nodes can take more than 15
	// minutes: allow 10 minutes per thousand, and say how far it got.
	deadline := max(15*time.Minute, time.Duration(n)*10*time.Minute/1000)
	began, lastReport := time.Now(), time.Now()
	created, running := 0, 0
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, deadline, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := env.Client.List(ctx, &list, client.InNamespace(fillerNamespace)); err != nil {
			return false, err
		}
		created, running = len(list.Items), 0
		for i := range list.Items {
			if harness.PodReady(&list.Items[i]) {
				running++
			}
		}
		if time.Since(lastReport) > time.Minute {
			lastReport = time.Now()
			fmt.Printf("    filler pods after %s: %d created, %d Running of %d\n", time.Since(began).Round(time.Second), created, running, n)
		}
		return running == n, nil
	})
	if err != nil {
		return fmt.Errorf("filler pods after %s: %d created, %d Running of %d: %w", deadline, created, running, n, err)
	}
	return nil
}

// rssSampler records the manager's resident set every second, and takes a
// heap snapshot whenever the resident set has grown by peakStep since the
// last one: the last is the heap at the peak.
type rssSampler struct {
	m       *harness.ManagerProcess
	began   time.Time
	stopCh  chan struct{}
	done    chan struct{}
	samples []rssSample
	peak    *heapSnapshot
}

// peakStep bounds how often the sampler profiles a growing manager.
const peakStep = 2 << 20

func sampleRSS(ctx context.Context, m *harness.ManagerProcess) *rssSampler {
	s := &rssSampler{m: m, began: time.Now(), stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if u, err := m.Usage(); err == nil {
				s.samples = append(s.samples, rssSample{At: time.Since(s.began).Seconds(), RSS: u.RSS, Anon: u.RSSAnon})
				if s.peak == nil || u.RSS >= s.peak.RSS+peakStep {
					if h, err := s.snapshot(ctx, "peak"); err == nil {
						s.peak = h
					}
				}
			}
			select {
			case <-s.stopCh:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// snapshot profiles the manager's heap now.
func (s *rssSampler) snapshot(ctx context.Context, label string) (*heapSnapshot, error) {
	u, err := s.m.Usage()
	if err != nil {
		return nil, err
	}
	h := &heapSnapshot{Label: label, At: time.Since(s.began).Seconds(), RSS: u.RSS}
	if h.profile, err = s.m.HeapProfile(ctx, 0); err != nil {
		return nil, err
	}
	text, err := s.m.HeapProfile(ctx, 1)
	if err != nil {
		return nil, err
	}
	return h, errors.Join(h.parseMemStats(text), h.attribute(h.profile))
}

func (s *rssSampler) stop() []rssSample {
	close(s.stopCh)
	<-s.done
	return s.samples
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// fmtCount is a stat of counts, "—" when there is none.
func fmtCount(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f", *v)
}

func fmtStat(v *float64) string {
	if v == nil {
		return "never"
	}
	return fmtSeconds(*v)
}

// p50p99 is a table cell: "p50 / p99".
func p50p99(st stats) string {
	return fmtStat(st.P50) + " / " + fmtStat(st.P99)
}

// table is the main result, in markdown: one column per cluster size.
func (r *scaleResult) table() string {
	var b strings.Builder
	b.WriteString("| | ")
	for _, sr := range r.Runs {
		fmt.Fprintf(&b, "%d nodes, %d pods | ", sr.Nodes, sr.Pods)
	}
	b.WriteString("Goal |\n|---|" + strings.Repeat("---|", len(r.Runs)) + "---|\n")
	row := func(name, goal string, cell func(scaleRun) string) {
		fmt.Fprintf(&b, "| %s | ", name)
		for _, sr := range r.Runs {
			b.WriteString(cell(sr) + " | ")
		}
		b.WriteString(goal + " |\n")
	}
	heap := func(sr scaleRun, label string) *heapSnapshot {
		for i := range sr.Heap {
			if sr.Heap[i].Label == label {
				return &sr.Heap[i]
			}
		}
		return nil
	}
	heapCell := func(label string, v func(*heapSnapshot) int64) func(scaleRun) string {
		return func(sr scaleRun) string {
			if h := heap(sr, label); h != nil {
				return mib(v(h))
			}
			return "—"
		}
	}
	row("gateways replaced", fmt.Sprintf("all %d", r.Fail), func(sr scaleRun) string { return fmt.Sprintf("%d/%d", sr.Replaced, r.Fail) })
	row("S3GWRemediations Succeeded", "", func(sr scaleRun) string { return fmt.Sprintf("%d/%d", sr.Succeeded, r.Fail) })
	row("CR → released p50 / p99", "p99 ≤ 1 s", func(sr scaleRun) string {
		return p50p99(sr.CRToReleased)
	})
	row("of which CR → old pod gone (the operator's force delete) p50 / p99", "", func(sr scaleRun) string {
		return p50p99(sr.CRToPodGone)
	})
	row("of which CR → the operator's release write p50 / p99", "", func(sr scaleRun) string {
		return p50p99(sr.CRToReleaseWrite)
	})
	row("… CR → the operator's removal of Longhorn's ticket p50 / p99", "", func(sr scaleRun) string {
		return p50p99(sr.CRToTicketRemoval)
	})
	row("… the ticket's removal → the operator's force delete (the simulated Longhorn stops the engine and replicas) p50 / p99 / min", "",
		func(sr scaleRun) string {
			return p50p99(sr.TicketRemovalToForceDelete) + " / " +
				fmtStat(sr.TicketRemovalToForceDelete.Min)
		})
	row("… the force delete → the operator's release write p50 / p99", "", func(sr scaleRun) string {
		return p50p99(sr.ForceDeleteToReleaseWrite)
	})
	row("and its release write → released (kube-controller-manager's detach) p50 / p99", "", func(sr scaleRun) string {
		return p50p99(sr.ReleaseWriteToReleased)
	})
	row("node NotReady → CR (the NodeHealthCheck) p50 / p99", "", func(sr scaleRun) string {
		return p50p99(sr.NotReadyToCR)
	})
	row("NodeHealthCheck passes during the failures: count, seconds each p50 / p99 / max", "", func(sr scaleRun) string {
		return fmt.Sprintf("%d, %s / %s / %s", sr.NHCPasses.Count, fmtStat(sr.NHCPasses.P50), fmtStat(sr.NHCPasses.P99),
			fmtStat(sr.NHCPasses.Max))
	})
	row("live LISTs of remediation CRs per NodeHealthCheck pass p50 / max", "", func(sr scaleRun) string {
		return fmtCount(sr.NHCCRLists.P50) + " / " + fmtCount(sr.NHCCRLists.Max)
	})
	row("CR → Ready p50 / p99", "", func(sr scaleRun) string { return p50p99(sr.CRToReady) })
	row("RTO p50 / p99", "", func(sr scaleRun) string { return p50p99(sr.RTO) })
	row("manager peak RSS (VmHWM)", "≤ 64 MiB at 1 000 nodes, ≤ 80 MiB at 3 000", func(sr scaleRun) string { return mib(sr.After.PeakRSS) })
	row("manager peak anonymous RSS (heap, stacks; sampled each second)", "", func(sr scaleRun) string {
		return mib(sr.peakAnon())
	})
	row("manager RSS before the failures: anonymous + file-backed (the binary)", "", func(sr scaleRun) string {
		return fmt.Sprintf("%s = %s + %s", mib(sr.Before.RSS), mib(sr.Before.RSSAnon), mib(sr.Before.RSSFile))
	})
	row("heap in use before the failures / at the peak", "", func(sr scaleRun) string {
		return heapCell("before the failures", func(h *heapSnapshot) int64 { return h.HeapInuse })(sr) + " / " +
			heapCell("peak", func(h *heapSnapshot) int64 { return h.HeapInuse })(sr)
	})
	row("live heap (profile) before the failures / at the peak", "", func(sr scaleRun) string {
		return heapCell("before the failures", func(h *heapSnapshot) int64 { return h.Live })(sr) + " / " +
			heapCell("peak", func(h *heapSnapshot) int64 { return h.Live })(sr)
	})
	row("manager CPU, start → end", "", func(sr scaleRun) string { return fmt.Sprintf("%.1f s", sr.After.CPU.Seconds()) })
	row("manager CPU idle, per minute", "", func(sr scaleRun) string { return fmt.Sprintf("%.2f s", sr.idleCPUPerMinute().Seconds()) })
	row("manager CPU, failures → all Succeeded", "", func(sr scaleRun) string {
		return fmt.Sprintf("%.1f s", (sr.After.CPU - sr.Before.CPU).Seconds())
	})
	row("API requests, failures → all Succeeded", "≤ 60 per remediation", func(sr scaleRun) string {
		return fmt.Sprintf("%d (%.0f per remediation, %s)", sr.Requests.Total, float64(sr.Requests.Total)/float64(r.Fail), sr.FailureSpan.Round(time.Second))
	})
	row("API requests idle, per 10 s", "0", func(sr scaleRun) string { return fmt.Sprintf("%.1f", per10s(sr.Idle.Total, sr.IdleWindow)) })
	row("cluster setup", "", func(sr scaleRun) string { return sr.Setup.Round(time.Second).String() })
	return b.String()
}

// peakAnon is the largest anonymous RSS sampled.
func (sr scaleRun) peakAnon() int64 {
	var peak int64
	for _, s := range sr.RSS {
		peak = max(peak, s.Anon)
	}
	return peak
}

// idleCPUPerMinute is the manager's CPU over the idle window, per minute.
func (sr scaleRun) idleCPUPerMinute() time.Duration {
	if sr.IdleWindow <= 0 || sr.SetUp.CPU == 0 {
		return 0
	}
	return time.Duration(float64(sr.Before.CPU-sr.SetUp.CPU) * float64(time.Minute) / float64(sr.IdleWindow))
}

// perNode is the cost of a node, from the runs with the fewest and the
// most nodes: the slope between them. Empty with a single node count.
func (r *scaleResult) perNode() string {
	if len(r.Runs) < 2 {
		return ""
	}
	lo := slices.MinFunc(r.Runs, func(a, b scaleRun) int { return cmp.Compare(a.Nodes, b.Nodes) })
	hi := slices.MaxFunc(r.Runs, func(a, b scaleRun) int { return cmp.Compare(a.Nodes, b.Nodes) })
	dn := float64(hi.Nodes - lo.Nodes)
	if dn == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| Per node, %d → %d nodes | |\n|---|---|\n", lo.Nodes, hi.Nodes)
	kib := func(name string, v func(scaleRun) int64) {
		fmt.Fprintf(&b, "| %s | %.1f KiB |\n", name, float64(v(hi)-v(lo))/dn/1024)
	}
	live := func(label string, field func(*heapSnapshot) int64) func(scaleRun) int64 {
		return func(sr scaleRun) int64 {
			for i := range sr.Heap {
				if sr.Heap[i].Label == label {
					return field(&sr.Heap[i])
				}
			}
			return 0
		}
	}
	kib("manager peak RSS", func(sr scaleRun) int64 { return sr.After.PeakRSS })
	kib("manager peak anonymous RSS", scaleRun.peakAnon)
	kib("manager RSS before the failures", func(sr scaleRun) int64 { return sr.Before.RSS })
	kib("heap in use before the failures", live("before the failures", func(h *heapSnapshot) int64 { return h.HeapInuse }))
	kib("live heap before the failures", live("before the failures", func(h *heapSnapshot) int64 { return h.Live }))
	fmt.Fprintf(&b, "| manager CPU idle, per minute | %.2f ms |\n",
		float64(hi.idleCPUPerMinute()-lo.idleCPUPerMinute())/dn/float64(time.Millisecond))
	fmt.Fprintf(&b, "| manager CPU, start → end | %.2f ms |\n", float64(hi.After.CPU-lo.After.CPU)/dn/float64(time.Millisecond))
	return b.String()
}

func (r *scaleResult) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# s3gw-remediation scale benchmark, %s\n\n", r.Started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Generated by `go run ./hack/bench scale %s` (`make bench-scale`); method in `docs/benchmark.md`.\n\n", r.Args)
	fmt.Fprintf(&b, "- **Cluster:** kwok nodes in %d zones, %d s3gw gateways each on its own RWO Longhorn volume; "+
		"%d gateway nodes (2 per zone at most) fail at once; NodeHealthCheck unhealthy duration %s.\n",
		r.Zones, r.Gateways, r.Fail, r.NHCDuration)
	for _, sr := range r.Runs {
		fmt.Fprintf(&b, "- **Settings (%s):** `%s`; a gateway counts as replaced when its S3GWRemediation Succeeded "+
			"within the node-monitor grace period, the unhealthy duration and %s of the failure\n",
			sr.clusterSize, sr.Settings, failureWindow(sr.Nodes))
	}
	fmt.Fprintf(&b, "- **Machine:** %s; wall time %s.\n", r.Machine, r.Wall.Round(time.Second))
	fmt.Fprintf(&b, "- **Code:** %s\n\n", r.Code)
	b.WriteString("The manager is `./cmd/manager`, built and run as its own OS process; its memory and CPU are read from " +
		"`/proc/<pid>/status` (VmHWM, VmRSS = RssAnon + RssFile: heap and stacks, and the binary's pages) and " +
		"`/proc/<pid>/stat` (utime + stime). Its heap is read from its `/debug/pprof/heap` (`--pprof-bind-address`, one " +
		"sample per 64 KiB allocated) before the failures and whenever its RSS has grown by 2 MiB since the last profile " +
		"(the last one is the peak's): heap in use is `MemStats.HeapInuse`, the live heap the profile's in-use space as of " +
		"the last garbage collection, split by owner (`hack/bench/heap.go`). Its API requests are " +
		"counted from kube-apiserver's audit log by its own identity. CR → released is S3GWRemediation created → no " +
		"VolumeAttachment of the volume left on the dead node. It is split at three of the operator's writes, the " +
		"first accepted of each in the audit log (`hack/bench/operatorwrites.go`): the removal of the failed node's " +
		"ticket from Longhorn's VolumeAttachment, the force delete of the old pod, and the release write, the failed " +
		"Node's status (ControllerDetach's `volumesInUse` edit). Between the first two the simulated Longhorn stops the " +
		"engine and the replicas and the operator sees it; after the release write only kube-controller-manager's " +
		"attach-detach controller and the simulated CSI attacher act. The audit log's wall-clock times are placed on " +
		"the monotonic timeline net of any step of the machine's clock since the node was lost. CR → Ready ends when the " +
		"replacement gateway is Ready, including the simulated Longhorn attach delay. The NodeHealthCheck's passes are " +
		"the emulator's reconcile passes that began between the first failure and the last Succeeded, timed on the wall " +
		"clock; each lists the remediation CRs live once per healthy node, as NHC does. Percentiles are nearest-rank.\n\n")
	b.WriteString(r.table())
	if per := r.perNode(); per != "" {
		b.WriteString("\n" + per)
	}
	for _, sr := range r.Runs {
		for _, h := range sr.Heap {
			fmt.Fprintf(&b, "\n**Heap owners (%s), %s** (`%s`; RSS %s, heap in use %s, live %s):\n\n```\n%s```\n",
				sr.clusterSize, h.Label, h.File, mib(h.RSS), mib(h.HeapInuse), mib(h.Live), h.topOwners(12))
		}
	}
	for _, sr := range r.Runs {
		fmt.Fprintf(&b, "\n**API requests by kind (%s):** %s\n", sr.clusterSize, sr.Requests)
	}
	b.WriteString("\nPer-failure timelines, the heap owners and the manager's RSS every second: `scale.json`; " +
		"the profiles: `go tool pprof -top heap-<nodes>nodes-<when>.pb.gz`.\n")
	return b.String()
}
