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
	"context"
	"flag"
	"fmt"
	"math"
	"path/filepath"
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

	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// The scale benchmark fails many gateway nodes of a large cluster at once
// and measures the operator, built from ./cmd/manager and run as its own
// process: per remediation CR → Ready, whether every gateway was replaced,
// the manager's peak RSS and CPU seconds, and its API requests. It runs
// once per cluster size in -pods, each in a fresh cluster with a fresh
// manager, so that the peak RSS of each is its own.
//
// Every gateway has its own RWO volume with replicas on its two failover
// nodes; the failing gateway nodes are spread over the zones, far below
// the node-lifecycle controller's disruption threshold (55 %) and
// NodeHealthCheck's minHealthy (51 %). The rest of the pods are pause pods
// of filler Deployments, spread by the scheduler.

type scaleConfig struct {
	nodes, gateways, fail, zones int
	pods                         []int
	nhcDuration                  time.Duration
	parallel                     int
	out, logDir, note            string
}

func scaleMain(ctx context.Context, args []string) error {
	var cfg scaleConfig
	var pods string
	fs := flag.NewFlagSet("scale", flag.ExitOnError)
	fs.IntVar(&cfg.nodes, "nodes", 1000, "simulated nodes")
	fs.IntVar(&cfg.gateways, "gateways", 100, "s3gw gateways, each on its own RWO volume and node")
	fs.IntVar(&cfg.fail, "fail", 20, "gateway nodes failed at once")
	fs.IntVar(&cfg.zones, "zones", 10, "zones the nodes are spread over")
	fs.StringVar(&pods, "pods", "1100,2200", "comma-separated pod counts of the cluster, one run each (gateways plus filler pods)")
	fs.DurationVar(&cfg.nhcDuration, "nhc-duration", shippedNHCDuration, "NodeHealthCheck unhealthy duration")
	fs.IntVar(&cfg.parallel, "parallel", 16, "concurrent setup operations")
	fs.StringVar(&cfg.out, "out", "", "result directory (default bench/results/<date>-scale)")
	fs.StringVar(&cfg.logDir, "logs", "", "keep control-plane, manager and controller logs in this directory")
	fs.StringVar(&cfg.note, "note", "", "a note on the code measured, for results.md")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, p := range strings.Split(pods, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < cfg.gateways {
			return fmt.Errorf("invalid pod count %q: want a number of at least -gateways", p)
		}
		cfg.pods = append(cfg.pods, n)
	}
	if cfg.fail > cfg.gateways || 3*cfg.gateways > cfg.nodes {
		return fmt.Errorf("need -fail ≤ -gateways and 3 nodes per gateway (its own and two failover nodes)")
	}

	began := time.Now()
	load, err := startMachineLoad()
	if err != nil {
		return err
	}
	res := &scaleResult{Args: commandLine(args), Started: began, Nodes: cfg.nodes, Gateways: cfg.gateways, Fail: cfg.fail,
		Zones: cfg.zones, NHCDuration: cfg.nhcDuration}
	for _, pods := range cfg.pods {
		sr, err := runScale(ctx, cfg, pods)
		if err != nil {
			return fmt.Errorf("run with %d pods: %w", pods, err)
		}
		res.Runs = append(res.Runs, sr)
	}
	res.Wall = time.Since(began)
	res.Machine, res.Code = machineDescription(load), codeDescription(cfg.note)
	out, err := resultDir(cfg.out, began, "-scale")
	if err != nil {
		return err
	}
	if err := writeResults(out, "scale.json", res, res.markdown(), nil); err != nil {
		return err
	}
	fmt.Print("\n" + res.table())
	fmt.Printf("\nWrote %s (results.md, scale.json) in %s.\n", out, res.Wall.Round(time.Second))
	return nil
}

// scaleResult is what the scale benchmark measured, as written to scale.json.
type scaleResult struct {
	Args        string        `json:"args"`
	Machine     string        `json:"machine"`
	Code        string        `json:"code,omitempty"`
	Started     time.Time     `json:"started"`
	Wall        time.Duration `json:"wallNanoseconds"`
	Nodes       int           `json:"nodes"`
	Gateways    int           `json:"gateways"`
	Fail        int           `json:"fail"`
	Zones       int           `json:"zones"`
	NHCDuration time.Duration `json:"nhcDurationNanoseconds"`
	Runs        []scaleRun    `json:"runs"`
}

// scaleRun is one cluster size.
type scaleRun struct {
	Settings string `json:"settings"`
	Pods     int    `json:"pods"`
	// Setup is how long building the cluster took.
	Setup       time.Duration `json:"setupNanoseconds"`
	AttachDelay time.Duration `json:"attachDelayNanoseconds"`
	Replaced    int           `json:"replaced"`
	Succeeded   int           `json:"succeeded"`
	// CRToReady is, per remediation, S3GWRemediation created → replacement
	// Ready; RTO is node lost → replacement Ready (seconds).
	CRToReady stats       `json:"crToReady"`
	RTO       stats       `json:"rto"`
	Failures  []runResult `json:"failures"`
	// Manager usage: before the failures (steady state after setup), and
	// at the end.
	Before cluster.Usage `json:"before"`
	After  cluster.Usage `json:"after"`
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
	At  float64 `json:"at"`
	RSS int64   `json:"rssBytes"`
}

const (
	scalePool       = "scale"
	scaleNamespace  = "s3gw"
	fillerNamespace = "filler"
	fillerPerDeploy = 100
	idleWindow      = 30 * time.Second
)

func runScale(ctx context.Context, cfg scaleConfig, pods int) (scaleRun, error) {
	began := time.Now()
	sr := scaleRun{Pods: pods, IdleWindow: idleWindow}
	log, closeLog, err := harness.FileLogger(logDirFor(cfg.logDir, pods), 0)
	if err != nil {
		return sr, err
	}
	defer closeLog()
	opts := harness.Options{Cluster: cluster.KubernetesDefaults(), Logger: log, AuditLog: true, OperatorProcess: true,
		UnhealthyDuration: cfg.nhcDuration}
	if cfg.logDir != "" {
		opts.Cluster.LogDir = filepath.Join(logDirFor(cfg.logDir, pods), "cluster")
	}
	fmt.Printf("[%d pods] Starting the cluster and the manager process ...\n", pods)
	env, err := harness.Start(ctx, opts)
	if err != nil {
		return sr, err
	}
	defer stopEnv(env)
	sr.Settings, sr.AttachDelay = env.Describe(), env.Sim.Options().AttachDelay
	fmt.Println(sr.Settings)

	sampler := sampleRSS(env.Manager)
	gateways, err := setUpScale(ctx, env, cfg, pods)
	if err != nil {
		sampler.stop()
		return sr, err
	}
	sr.Setup = time.Since(began)
	fmt.Printf("[%d pods] %d nodes, %d gateways and %d filler pods ready after %s; counting the idle manager for %s ...\n",
		pods, cfg.nodes, cfg.gateways, pods-cfg.gateways, sr.Setup.Round(time.Second), idleWindow)
	if sr.Idle, err = countWindow(ctx, env, idleWindow); err != nil {
		sampler.stop()
		return sr, err
	}
	if sr.Before, err = env.Manager.Usage(); err != nil {
		sampler.stop()
		return sr, err
	}

	fmt.Printf("[%d pods] Failing %d gateway nodes at once ...\n", pods, cfg.fail)
	runs, err := env.FailAll(ctx, gateways[:cfg.fail], nil)
	if err != nil {
		sampler.stop()
		return sr, err
	}
	timeout := opts.Cluster.NodeMonitorGracePeriod + cfg.nhcDuration + 5*time.Minute
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
	sr.RSS = sampler.stop()
	if sr.After, err = env.Manager.Usage(); err != nil {
		return sr, err
	}
	if sr.Requests, err = env.OperatorRequests(runs[0].FailedAt, end); err != nil {
		return sr, err
	}
	sr.summarize(runs)
	fmt.Printf("[%d pods] %d/%d replaced, CR → Ready p50 %s p99 %s, manager peak RSS %s, CPU %s, %d requests\n",
		pods, sr.Replaced, cfg.fail, fmtStat(sr.CRToReady.P50), fmtStat(sr.CRToReady.P99), mib(sr.After.PeakRSS),
		sr.After.CPU.Round(10*time.Millisecond), sr.Requests.Total)
	return sr, nil
}

func logDirFor(logDir string, pods int) string {
	if logDir == "" {
		return ""
	}
	return filepath.Join(logDir, fmt.Sprintf("pods-%d", pods))
}

func (sr *scaleRun) summarize(runs []*harness.Run) {
	var crToReady, rto []float64
	for _, r := range runs {
		rr := runResult{Node: r.Node, Milestones: map[string]float64{}}
		for _, e := range r.Timeline() {
			rr.Milestones[e.Milestone.String()] = e.After.Seconds()
		}
		ready, ok := r.Seen(harness.ReplacementReady)
		rr.Recovered = ok
		_, rr.ReplacementNode = r.Replacement()
		if _, ok := r.Seen(harness.RemediationSucceeded); ok {
			sr.Succeeded++
		}
		sr.Failures = append(sr.Failures, rr)
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
	sr.CRToReady, sr.RTO = newStats(crToReady), newStats(rto)
}

// setUpScale adds the nodes, the NodeHealthCheck, the gateways and the
// filler pods, and returns the gateways in node order.
func setUpScale(ctx context.Context, env *harness.Env, cfg scaleConfig, pods int) ([]*harness.Gateway, error) {
	if _, err := env.EnableRemediation(ctx, harness.Remediation{
		Name: scalePool, NodeSelector: map[string]string{poolLabel: scalePool},
	}); err != nil {
		return nil, err
	}
	nodes := make([]int, cfg.nodes)
	for i := range nodes {
		nodes[i] = i
	}
	began := time.Now()
	err := parallel(ctx, cfg.parallel, nodes, func(ctx context.Context, i int) error {
		return env.AddNodes(ctx, map[string]string{poolLabel: scalePool, harness.ZoneLabel: fmt.Sprintf("zone-%d", i%cfg.zones)}, nodeName(i))
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("  %d nodes Ready in %s\n", cfg.nodes, time.Since(began).Round(time.Second))

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
		return nil, err
	}
	fmt.Printf("  %d gateways Ready in %s\n", cfg.gateways, time.Since(began).Round(time.Second))

	began = time.Now()
	if err := deployFiller(ctx, env, pods-cfg.gateways); err != nil {
		return nil, err
	}
	fmt.Printf("  %d filler pods Running in %s\n", pods-cfg.gateways, time.Since(began).Round(time.Second))
	return gateways, nil
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
	return wait.PollUntilContextTimeout(ctx, 2*time.Second, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := env.Client.List(ctx, &list, client.InNamespace(fillerNamespace)); err != nil {
			return false, err
		}
		running := 0
		for i := range list.Items {
			if harness.PodReady(&list.Items[i]) {
				running++
			}
		}
		return running == n, nil
	})
}

// rssSampler records the manager's resident set every second.
type rssSampler struct {
	stopCh  chan struct{}
	done    chan struct{}
	samples []rssSample
}

func sampleRSS(m *harness.ManagerProcess) *rssSampler {
	s := &rssSampler{stopCh: make(chan struct{}), done: make(chan struct{})}
	began := time.Now()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if u, err := m.Usage(); err == nil {
				s.samples = append(s.samples, rssSample{At: time.Since(began).Seconds(), RSS: u.RSS})
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

func (s *rssSampler) stop() []rssSample {
	close(s.stopCh)
	<-s.done
	return s.samples
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func fmtStat(v *float64) string {
	if v == nil {
		return "never"
	}
	return fmtSeconds(*v)
}

// table is the main result, in markdown: one column per cluster size.
func (r *scaleResult) table() string {
	var b strings.Builder
	b.WriteString("| | ")
	for _, sr := range r.Runs {
		fmt.Fprintf(&b, "%d pods | ", sr.Pods)
	}
	b.WriteString("Goal |\n|---|" + strings.Repeat("---|", len(r.Runs)) + "---|\n")
	row := func(name, goal string, cell func(scaleRun) string) {
		fmt.Fprintf(&b, "| %s | ", name)
		for _, sr := range r.Runs {
			b.WriteString(cell(sr) + " | ")
		}
		b.WriteString(goal + " |\n")
	}
	row("gateways replaced", fmt.Sprintf("all %d", r.Fail), func(sr scaleRun) string { return fmt.Sprintf("%d/%d", sr.Replaced, r.Fail) })
	row("S3GWRemediations Succeeded", "", func(sr scaleRun) string { return fmt.Sprintf("%d/%d", sr.Succeeded, r.Fail) })
	row("CR → Ready p50", "", func(sr scaleRun) string { return fmtStat(sr.CRToReady.P50) })
	row("CR → Ready p99", "≤ 5 s", func(sr scaleRun) string { return fmtStat(sr.CRToReady.P99) })
	row("RTO p50 / p99", "", func(sr scaleRun) string { return fmtStat(sr.RTO.P50) + " / " + fmtStat(sr.RTO.P99) })
	row("manager peak RSS (VmHWM)", "≤ 64 MiB, flat", func(sr scaleRun) string { return mib(sr.After.PeakRSS) })
	row("manager RSS before the failures", "", func(sr scaleRun) string { return mib(sr.Before.RSS) })
	row("manager CPU, start → end", "", func(sr scaleRun) string { return fmt.Sprintf("%.1f s", sr.After.CPU.Seconds()) })
	row("manager CPU, failures → all Succeeded", "", func(sr scaleRun) string {
		return fmt.Sprintf("%.1f s", (sr.After.CPU - sr.Before.CPU).Seconds())
	})
	row("API requests, failures → all Succeeded", "", func(sr scaleRun) string {
		return fmt.Sprintf("%d (%.0f per remediation, %s)", sr.Requests.Total, float64(sr.Requests.Total)/float64(r.Fail), sr.FailureSpan.Round(time.Second))
	})
	row("API requests idle, per 10 s", "", func(sr scaleRun) string { return fmt.Sprintf("%.1f", per10s(sr.Idle.Total, sr.IdleWindow)) })
	row("cluster setup", "", func(sr scaleRun) string { return sr.Setup.Round(time.Second).String() })
	return b.String()
}

func (r *scaleResult) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# s3gw-remediation scale benchmark, %s\n\n", r.Started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Generated by `go run ./hack/bench scale %s` (`make bench-scale`); method in `docs/benchmark.md`.\n\n", r.Args)
	fmt.Fprintf(&b, "- **Cluster:** %d kwok nodes in %d zones, %d s3gw gateways each on its own RWO Longhorn volume; "+
		"%d gateway nodes (2 per zone at most) fail at once; NodeHealthCheck unhealthy duration %s.\n",
		r.Nodes, r.Zones, r.Gateways, r.Fail, r.NHCDuration)
	for _, sr := range r.Runs {
		fmt.Fprintf(&b, "- **Settings (%d pods):** `%s`\n", sr.Pods, sr.Settings)
	}
	fmt.Fprintf(&b, "- **Machine:** %s; wall time %s.\n", r.Machine, r.Wall.Round(time.Second))
	fmt.Fprintf(&b, "- **Code:** %s\n\n", r.Code)
	b.WriteString("The manager is `./cmd/manager`, built and run as its own OS process; its memory and CPU are read from " +
		"`/proc/<pid>/status` (VmHWM, VmRSS) and `/proc/<pid>/stat` (utime + stime). Its API requests are counted " +
		"from kube-apiserver's audit log by its own identity. CR → Ready is S3GWRemediation created → replacement gateway Ready, " +
		"including the simulated Longhorn attach delay; percentiles are nearest-rank.\n\n")
	b.WriteString(r.table())
	for _, sr := range r.Runs {
		fmt.Fprintf(&b, "\n**API requests by kind (%d pods):** %s\n", sr.Pods, sr.Requests)
	}
	b.WriteString("\nPer-failure timelines and the manager's RSS every second: `scale.json`.\n")
	return b.String()
}
