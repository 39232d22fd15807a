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
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
	"github.com/s3gw-tech/s3gw-remediation/test/longhornsim"
)

// The failover benchmark measures s3gw's recovery time after a node
// failure, N times per mode, with Kubernetes' default timings:
//
//   - controller-detach: the shipped configuration, NodeHealthCheck (its
//     unhealthy duration from config/samples) with s3gw-remediation's
//     ControllerDetach, fencing evidence from storage isolation;
//   - longhorn-policy: Longhorn's node-down-pod-deletion-policy
//     delete-deployment-pod, with the gateway's not-ready/unreachable
//     tolerations shortened to the NodeHealthCheck duration: the best a
//     user can do without the operator;
//   - none: Longhorn's default (do-nothing);
//   - oos-at-notready: a fencer adds the out-of-service taint the moment the
//     node is NotReady, no operator: the floor of a fencer that relies on
//     Kubernetes' own out-of-service handling (Pod GC's sweep included);
//   - floor: the node's pods are force-deleted and its volumes dropped from
//     status.volumesInUse the moment it is NotReady, nothing checked, no
//     operator: NotReady → attach → Ready and nothing else, the physical
//     floor every mode is read against;
//   - cold-image: the shipped setting without pre-pull, the spare without
//     s3gw's image: the replacement starts -image-pull-time after its
//     volume is attached (the local cluster's simulated pull, cluster.
//     ImagePullTimeAnnotation);
//   - warm-image: the shipped setting with spec.prePull: the failure
//     starts once the protection report says the pre-pull pod runs on the
//     spare, and the replacement starts without a pull;
//   - delete-volume-attachment, out-of-service-taint, controller-detach-10s
//     (not by default): the operator's other release strategies, and the
//     shipped strategy behind the NodeHealthCheck duration shipped before.
//
// All runs share one cluster and run concurrently: each has a zone of its
// own with the failing node and a spare, so that the node-lifecycle
// controller's per-zone eviction rate limit and disruption modes treat every
// failure as if it were alone. Failures start a few seconds apart to spread
// the load. Results go to bench/results/<date>-failover/: results.md, runs.json
// and rto.svg.

// shippedNHCDuration is the shipped NodeHealthCheck's unhealthy duration
// for a lost node (Ready=Unknown), the case the benchmark fails nodes into.
// Every mode's NodeHealthCheck is the shipped one (config/nodehealthcheck,
// what the chart and dist/ install), narrowed to the mode's pool
// (harness.Options.ShippedNodeHealthCheck).
const shippedNHCDuration = harness.ShippedUnhealthyDuration

const poolLabel = "bench.s3gw.io/mode"

// mode is one way of handling the node failure.
type mode struct {
	Name, Title string
	// Strategy is the operator's release strategy; empty without the operator.
	Strategy s3gwv1alpha1.ReleaseStrategy
	// LonghornPolicy turns on delete-deployment-pod for the mode's namespace.
	LonghornPolicy bool
	// MatchTolerations sets the gateway's not-ready and unreachable
	// tolerationSeconds to the NodeHealthCheck duration.
	MatchTolerations bool
	// FAR fences the node through the template's FAR delegate (evidence
	// OutOfServiceTaint requires): the FAR stand-in runs fence_dummy.
	FAR bool
	// OutOfServiceAtNotReady has a fencer taint the node out-of-service as
	// soon as it is NotReady.
	OutOfServiceAtNotReady bool
	// ReleaseAtNotReady frees the node as soon as it is NotReady.
	ReleaseAtNotReady bool
	// NHCDuration overrides -nhc-duration for this mode's NodeHealthCheck.
	NHCDuration time.Duration
	// PrePull turns the template's spec.prePull on; the node fails once
	// the report says the spare holds the gateway's images.
	PrePull bool
	// ColdImage leaves the gateway's images off the spare: its replacement
	// starts -image-pull-time late there.
	ColdImage bool
}

func (m mode) namespace() string { return "bench-" + m.Name }

func (m mode) operator() bool { return m.Strategy != "" }

// floorMode is the mode every other is read against.
const floorMode = "floor"

var allModes = []mode{
	{Name: floorMode, Title: "physical floor: released at NotReady", ReleaseAtNotReady: true},
	{Name: "controller-detach", Title: "s3gw-remediation, shipped setting", Strategy: s3gwv1alpha1.ReleaseControllerDetach},
	{Name: "longhorn-policy", Title: "Longhorn delete-pod, tolerations = NHC", LonghornPolicy: true, MatchTolerations: true},
	{Name: "none", Title: "Longhorn default (do-nothing)"},
	{Name: "oos-at-notready", Title: "out-of-service taint at NotReady", OutOfServiceAtNotReady: true},
	{Name: "delete-volume-attachment", Title: "s3gw-remediation DeleteVolumeAttachment", Strategy: s3gwv1alpha1.ReleaseDeleteVolumeAttachment},
	{Name: "out-of-service-taint", Title: "s3gw-remediation OutOfServiceTaint", Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint, FAR: true},
	{Name: "controller-detach-10s", Title: "s3gw-remediation, NHC 10 s (shipped before)",
		Strategy: s3gwv1alpha1.ReleaseControllerDetach, NHCDuration: 10 * time.Second},
	{Name: "cold-image", Title: "s3gw-remediation, image not on the spare (pull simulated)",
		Strategy: s3gwv1alpha1.ReleaseControllerDetach, ColdImage: true},
	{Name: "warm-image", Title: "s3gw-remediation, image pre-pulled on the spare",
		Strategy: s3gwv1alpha1.ReleaseControllerDetach, PrePull: true},
}

// defaultModes are the modes run unless -modes says otherwise.
const defaultModes = "floor,controller-detach,longhorn-policy,none,oos-at-notready,cold-image,warm-image"

// defaultImagePullTime is the simulated pull of s3gw's image on a cold
// node: about 5-20 s for an image of its size from a registry on the LAN.
const defaultImagePullTime = 15 * time.Second

type config struct {
	n           int
	modes       []mode
	timings     string
	nhcDuration time.Duration
	stagger     time.Duration
	window      time.Duration
	parallel    int
	out         string
	logDir      string
	note        string
	// imagePullTime is the cold-image mode's simulated pull.
	imagePullTime time.Duration
}

func failoverMain(ctx context.Context, args []string) error {
	var cfg config
	fs := flag.NewFlagSet("failover", flag.ExitOnError)
	var modes string
	fs.IntVar(&cfg.n, "n", 20, "node failures per mode")
	fs.StringVar(&modes, "modes", defaultModes, "comma-separated modes: "+modeNames(allModes))
	fs.StringVar(&cfg.timings, "timings", "defaults", "cluster timings: defaults (Kubernetes defaults) or compressed (quick checks only)")
	fs.DurationVar(&cfg.nhcDuration, "nhc-duration", shippedNHCDuration,
		"NodeHealthCheck Ready=Unknown duration (default: the shipped NodeHealthCheck's; NHC's default 300s)")
	fs.DurationVar(&cfg.stagger, "stagger", 2*time.Second, "delay between the starts of consecutive failures")
	fs.DurationVar(&cfg.window, "window", 0,
		"how long after its failure a run may take to recover (default: NotReady grace + eviction + 6m force detach + 1m)")
	fs.IntVar(&cfg.parallel, "parallel", 8, "concurrent setup operations")
	fs.StringVar(&cfg.out, "out", "", "result directory (default bench/results/<date>-failover)")
	fs.StringVar(&cfg.logDir, "logs", "", "keep control-plane and controller logs in this directory")
	fs.StringVar(&cfg.note, "note", "", "a note on the code measured, for results.md")
	fs.DurationVar(&cfg.imagePullTime, "image-pull-time", defaultImagePullTime,
		"cold-image mode: how long the replacement's node takes to pull s3gw's image (simulated)")
	from := fs.String("from", "", "rewrite results.md and rto.svg from this runs.json instead of measuring")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from != "" {
		return rewrite(*from)
	}
	var err error
	if cfg.modes, err = parseModes(modes); err != nil {
		return err
	}
	return run(ctx, cfg, commandLine(args))
}

func modeNames(ms []mode) string {
	names := make([]string, 0, len(ms))
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return strings.Join(names, ",")
}

func parseModes(s string) ([]mode, error) {
	var out []mode
	for _, name := range strings.Split(s, ",") {
		i := slices.IndexFunc(allModes, func(m mode) bool { return m.Name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("unknown mode %q (known: %s)", name, modeNames(allModes))
		}
		out = append(out, allModes[i])
	}
	return out, nil
}

// benchRun is one node failure of one mode.
type benchRun struct {
	mode  mode
	index int
	node  string
	spare string
	gw    *harness.Gateway
	run   *harness.Run
	// stuck describes, for a run that did not recover, what held it.
	stuck string
}

func run(ctx context.Context, cfg config, args string) error {
	began := time.Now()
	log, closeLog, err := harness.FileLogger(cfg.logDir, 0)
	if err != nil {
		return err
	}
	defer closeLog()

	opts := harness.Options{Logger: log, UnhealthyDuration: cfg.nhcDuration, ShippedNodeHealthCheck: true, AuditLog: true}
	switch cfg.timings {
	case "defaults":
		opts.Cluster = cluster.KubernetesDefaults()
	case "compressed":
		opts.Cluster = cluster.Compressed()
	default:
		return fmt.Errorf("unknown -timings %q", cfg.timings)
	}
	if cfg.logDir != "" {
		opts.Cluster.LogDir = filepath.Join(cfg.logDir, "cluster")
	}
	c := opts.Cluster
	if cfg.window == 0 {
		cfg.window = c.NodeMonitorGracePeriod + time.Duration(c.DefaultUnreachableTolerationSeconds)*time.Second + 7*time.Minute
	}
	for _, m := range cfg.modes {
		if m.LonghornPolicy {
			opts.Longhorn.NodeDownPodDeletionPolicy = longhornsim.PolicyDeleteDeploymentPod
			opts.Longhorn.NodeDownPodDeletionPolicyNamespaces = append(opts.Longhorn.NodeDownPodDeletionPolicyNamespaces, m.namespace())
		}
	}

	load, err := startMachineLoad()
	if err != nil {
		return err
	}
	fmt.Printf("Starting the cluster (%s timings) ...\n", cfg.timings)
	env, err := harness.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	settings := env.Describe()
	fmt.Println(settings)

	runs, err := setUp(ctx, env, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("%d gateways Ready on %d nodes after %s; failing one node every %s ...\n",
		len(runs), 2*len(runs), time.Since(began).Round(time.Second), cfg.stagger)
	if err := failAndWait(ctx, env, cfg, runs); err != nil {
		return err
	}

	res := summarize(cfg, runs, env.Sim.Options().AttachDelay)
	requests, err := env.OperatorRequests(runs[0].run.FailedAt, time.Now())
	if err != nil {
		return err
	}
	res.OperatorRequests = &requests
	for _, r := range runs {
		if _, ok := r.run.Seen(harness.RemediationCreated); ok {
			res.Remediations++
		}
	}
	res.Settings, res.Args, res.Started = settings, args, began
	if slices.ContainsFunc(cfg.modes, func(m mode) bool { return m.ColdImage }) {
		res.ImagePullTime = cfg.imagePullTime
	}
	res.Grace, res.Eviction = c.NodeMonitorGracePeriod, time.Duration(c.DefaultUnreachableTolerationSeconds)*time.Second
	stopEnv(env)
	res.Wall = time.Since(began)
	res.Machine, res.measuredCode = machineDescription(load), measureCode(cfg.note)
	out, err := resultDir(cfg.out, began, "failover")
	if err != nil {
		return err
	}
	if err := res.write(out); err != nil {
		return err
	}
	fmt.Print("\n" + res.table())
	fmt.Printf("\nWrote %s (results.md, runs.json, rto.svg) in %s.\n", out, res.Wall.Round(time.Second))
	return nil
}

// setUp adds, per run, a zone with the failing node and a spare, enables
// each operator mode's NodeHealthCheck, and deploys the gateways.
func setUp(ctx context.Context, env *harness.Env, cfg config) ([]*benchRun, error) {
	runs := make([]*benchRun, 0, cfg.n*len(cfg.modes))
	for i := range cfg.n {
		for _, m := range cfg.modes {
			node := fmt.Sprintf("%s-%d", m.Name, i)
			runs = append(runs, &benchRun{mode: m, index: i, node: node, spare: node + "-spare"})
		}
	}
	err := parallel(ctx, cfg.parallel, runs, func(ctx context.Context, r *benchRun) error {
		nodeLabels := map[string]string{harness.ZoneLabel: r.node, poolLabel: r.mode.Name}
		return env.AddNodes(ctx, nodeLabels, r.node, r.spare)
	})
	if err != nil {
		return nil, err
	}
	for _, m := range cfg.modes {
		if m.OutOfServiceAtNotReady {
			if err := env.EnableOutOfServiceFencer(map[string]string{poolLabel: m.Name}); err != nil {
				return nil, err
			}
		}
		if m.ReleaseAtNotReady {
			if err := env.EnableReleaseAtNotReady(map[string]string{poolLabel: m.Name}); err != nil {
				return nil, err
			}
		}
		if !m.operator() {
			continue
		}
		spec := s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{Strategy: m.Strategy}}
		if m.PrePull {
			// Its DaemonSets for its own gateways only: the other modes'
			// spares stay as their modes have them.
			spec.Namespaces = []string{m.namespace()}
		}
		if m.FAR {
			// The out-of-service taint is for nodes proven shut down: a fence
			// agent's word, not storage isolation. The delegate's template
			// and its Secret sit in FAR's namespace, where the delegate is
			// created and FAR reads the Secret.
			fence, err := env.CreateFARTemplate(ctx, harness.FARTemplate{Name: "far-" + m.Name})
			if err != nil {
				return nil, err
			}
			spec.Fencing = s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false), Delegate: harness.FARDelegate(fence)}
		}
		if _, err := env.EnableRemediation(ctx, harness.Remediation{
			Name: m.Name, NodeSelector: map[string]string{poolLabel: m.Name}, Spec: spec, UnhealthyDuration: m.NHCDuration,
			PrePull: s3gwv1alpha1.PrePullSpec{Enabled: m.PrePull},
		}); err != nil {
			return nil, err
		}
	}
	err = parallel(ctx, cfg.parallel, runs, func(ctx context.Context, r *benchRun) error {
		spec := harness.GatewaySpec{
			Namespace: r.mode.namespace(), Release: fmt.Sprintf("s3gw-%d", r.index),
			Node: r.node, Failover: []string{r.spare}, ReplicaNodes: []string{r.spare},
		}
		if r.mode.MatchTolerations {
			spec.NodeFailureToleration = ptr.To(int64(cfg.nhcDuration.Seconds()))
		}
		if r.mode.ColdImage {
			spec.ImagePullTime, spec.ColdNodes = cfg.imagePullTime, []string{r.spare}
		}
		var err error
		if r.gw, err = env.DeployGateway(ctx, spec); err != nil || !r.mode.PrePull {
			return err
		}
		// Warm means the operator's pre-pull pod runs on the spare, as
		// the protection report sees it; only then does the node fail.
		_, err = env.WaitForWarmCandidates(ctx, r.mode.Name, r.gw, 2*time.Minute)
		return err
	})
	return runs, err
}

// failAndWait fails the runs' nodes one after another, interleaving the
// modes so that all see the same load, and waits until each run recovered
// or its window passed.
func failAndWait(ctx context.Context, env *harness.Env, cfg config, runs []*benchRun) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	recovered, pending := 0, len(runs)
	for i, r := range runs {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(cfg.stagger):
			}
		}
		var err error
		if r.run, err = env.Fail(ctx, r.gw, nil); err != nil {
			return err
		}
		wg.Go(func() {
			err := r.run.Wait(ctx, harness.ReplacementReady, cfg.window)
			mu.Lock()
			defer mu.Unlock()
			pending--
			status := "recovered in " + seen(r.run, harness.ReplacementReady)
			if err == nil {
				recovered++
			} else {
				r.stuck = stuckState(ctx, env, r)
				status = "NOT recovered within " + cfg.window.String() + ": " + r.stuck
			}
			fmt.Printf("  %-26s %-28s %s (%d/%d done)\n", r.mode.Name, r.node, status, len(runs)-pending, len(runs))
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return ctx.Err()
		case <-ctx.Done():
			<-done
			return ctx.Err()
		case <-tick.C:
			mu.Lock()
			fmt.Printf("  … %d of %d runs pending, %d recovered so far (oldest failure %s ago)\n",
				pending, len(runs), recovered, time.Since(runs[0].run.FailedAt).Round(time.Second))
			mu.Unlock()
		}
	}
}

func seen(r *harness.Run, m harness.Milestone) string {
	if d, ok := r.Seen(m); ok {
		return harness.FormatDuration(d)
	}
	return "never"
}

// stuckState describes, from the API, what holds a run that did not recover.
func stuckState(ctx context.Context, env *harness.Env, r *benchRun) string {
	var parts []string
	if _, ok := r.run.Seen(harness.AttachmentReleased); !ok {
		parts = append(parts, "VolumeAttachment still on the dead node")
	}
	if _, ok := r.run.Seen(harness.OldPodGone); !ok {
		if _, terminating := r.run.Seen(harness.OldPodTerminating); terminating {
			parts = append(parts, "old pod Terminating")
		} else {
			parts = append(parts, "old pod still bound")
		}
	}
	if rem, err := env.RemediationFor(ctx, r.node); err == nil && rem != nil {
		parts = append(parts, "S3GWRemediation phase "+string(rem.Status.Phase))
	}
	if len(parts) == 0 {
		return "replacement not Ready"
	}
	return strings.Join(parts, ", ")
}
