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
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// The requests benchmark counts the operator's API requests for one
// remediation at a time, from kube-apiserver's audit log, with the manager
// built from ./cmd/manager running as its own process and identity:
//
//   - idle: per 10 s with no remediation;
//   - happy path: from NodeHealthCheck's create of the S3GWRemediation to
//     the status write that reported Succeeded (storage isolation as the
//     evidence, ControllerDetach), then per 10 s while the Succeeded CR
//     waits for its node, and the clean-up once the node is back;
//   - waiting for fencing: per 10 s while a remediation waits for evidence
//     that never comes (its template accepts only the out-of-service taint).
//
// Runs are sequential, so that every request belongs to the remediation
// under measurement. Timings are compressed: detection does not change the
// count, only how long the run takes.

type requestsConfig struct {
	runs       int
	waitWindow time.Duration
	idleWindow time.Duration
	out        string
	logDir     string
	note       string
}

func requestsMain(ctx context.Context, args []string) error {
	var cfg requestsConfig
	fs := flag.NewFlagSet("requests", flag.ExitOnError)
	fs.IntVar(&cfg.runs, "runs", 3, "happy-path remediations, one after another")
	fs.DurationVar(&cfg.waitWindow, "wait-window", time.Minute, "how long to count a remediation waiting for fencing")
	fs.DurationVar(&cfg.idleWindow, "idle-window", 30*time.Second, "how long to count the idle operator")
	fs.StringVar(&cfg.out, "out", "", "result directory (default bench/results/<date>-requests)")
	fs.StringVar(&cfg.logDir, "logs", "", "keep control-plane, manager and controller logs in this directory")
	fs.StringVar(&cfg.note, "note", "", "a note on the code measured, for results.md")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return runRequests(ctx, cfg, commandLine(args))
}

// requestsResult is what the requests benchmark measured, as written to
// requests.json.
type requestsResult struct {
	measuredCode

	Args     string        `json:"args"`
	Settings string        `json:"settings"`
	Machine  string        `json:"machine"`
	Started  time.Time     `json:"started"`
	Wall     time.Duration `json:"wallNanoseconds"`
	// Idle is the operator's requests during IdleWindow with nothing to do.
	IdleWindow time.Duration  `json:"idleWindowNanoseconds"`
	Idle       apiaudit.Count `json:"idle"`
	Happy      []happyRun     `json:"happy"`
	// Waiting are the requests during WaitWindow of a remediation waiting
	// for fencing, after its first pass.
	WaitWindow time.Duration  `json:"waitWindowNanoseconds"`
	Waiting    apiaudit.Count `json:"waiting"`
	// WaitingFirst are its requests from its creation to WaitingForFencing.
	WaitingFirst apiaudit.Count `json:"waitingFirst"`
}

type happyRun struct {
	Node string `json:"node"`
	// CRToSucceeded are the requests from the CR's creation to the status
	// write that reported Succeeded, which took Took.
	CRToSucceeded apiaudit.Count `json:"crToSucceeded"`
	Took          time.Duration  `json:"tookNanoseconds"`
	// AfterSucceeded are the requests in the 10 s after Succeeded, while the
	// CR waits for its node.
	AfterSucceeded apiaudit.Count `json:"afterSucceeded10s"`
	// CleanUp are the requests from the node's recovery until the CR is gone.
	CleanUp apiaudit.Count `json:"cleanUp"`
}

const (
	happyPool   = "happy"
	blockedPool = "blocked"
	// settle is how long the operator gets after a phase before counting
	// starts or after a window ends, so that every request it triggered is
	// in the log.
	settle = 10 * time.Second
)

func runRequests(ctx context.Context, cfg requestsConfig, args string) error {
	began := time.Now()
	log, closeLog, err := harness.FileLogger(cfg.logDir, 0)
	if err != nil {
		return err
	}
	defer closeLog()
	opts := harness.Options{Cluster: cluster.Compressed(), Logger: log, AuditLog: true, OperatorProcess: true}
	if cfg.logDir != "" {
		opts.Cluster.LogDir = filepath.Join(cfg.logDir, "cluster")
	}
	load, err := startMachineLoad()
	if err != nil {
		return err
	}
	fmt.Println("Starting the cluster and the manager process ...")
	env, err := harness.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	res := &requestsResult{Args: args, Settings: env.Describe(), Started: began,
		IdleWindow: cfg.idleWindow, WaitWindow: cfg.waitWindow}
	fmt.Println(res.Settings)

	happy, blocked, err := setUpRequests(ctx, env, cfg.runs)
	if err != nil {
		return err
	}

	fmt.Printf("Counting the idle operator for %s ...\n", cfg.idleWindow)
	if res.Idle, err = countWindow(ctx, env, cfg.idleWindow); err != nil {
		return err
	}
	for _, gw := range happy {
		run, err := measureHappy(ctx, env, gw)
		if err != nil {
			return err
		}
		fmt.Printf("  %s: %d requests from CR to Succeeded (%s); %d in the 10 s after; %d to clean up\n",
			run.Node, run.CRToSucceeded.Total, run.Took.Round(time.Millisecond), run.AfterSucceeded.Total, run.CleanUp.Total)
		res.Happy = append(res.Happy, run)
	}
	if res.WaitingFirst, res.Waiting, err = measureWaiting(ctx, env, blocked, cfg.waitWindow); err != nil {
		return err
	}
	fmt.Printf("  waiting for fencing: %d requests in %s\n", res.Waiting.Total, cfg.waitWindow)

	stopEnv(env)
	res.Wall = time.Since(began)
	res.Machine, res.measuredCode = machineDescription(load), measureCode(cfg.note)
	out, err := resultDir(cfg.out, began, "requests")
	if err != nil {
		return err
	}
	if err := res.write(out); err != nil {
		return err
	}
	fmt.Print("\n" + res.markdown())
	fmt.Printf("\nWrote %s (results.md, requests.json) in %s.\n", out, res.Wall.Round(time.Second))
	return nil
}

// setUpRequests deploys one gateway per happy-path run and one whose
// remediation can never be fenced, each on a node with a spare in a zone
// of its own.
func setUpRequests(ctx context.Context, env *harness.Env, runs int) (happy []*harness.Gateway, blocked *harness.Gateway, err error) {
	pools := map[string]s3gwv1alpha1.S3GWRemediationSpec{
		happyPool: {},
		// Only an out-of-service taint would count, and nobody sets one.
		blockedPool: {Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false)}},
	}
	for pool, spec := range pools {
		if _, err := env.EnableRemediation(ctx, harness.Remediation{
			Name: pool, NodeSelector: map[string]string{poolLabel: pool}, Spec: spec,
		}); err != nil {
			return nil, nil, err
		}
	}
	deploy := func(pool string, i int) (*harness.Gateway, error) {
		node := fmt.Sprintf("%s-%d", pool, i)
		if err := env.AddNodes(ctx, map[string]string{harness.ZoneLabel: node, poolLabel: pool}, node, node+"-spare"); err != nil {
			return nil, err
		}
		return env.DeployGateway(ctx, harness.GatewaySpec{
			Namespace: "bench-" + pool, Release: fmt.Sprintf("s3gw-%d", i),
			Node: node, Failover: []string{node + "-spare"}, ReplicaNodes: []string{node + "-spare"},
		})
	}
	for i := range runs {
		gw, err := deploy(happyPool, i)
		if err != nil {
			return nil, nil, err
		}
		happy = append(happy, gw)
	}
	blocked, err = deploy(blockedPool, 0)
	return happy, blocked, err
}

// countWindow counts the operator's requests during the next d.
func countWindow(ctx context.Context, env *harness.Env, d time.Duration) (apiaudit.Count, error) {
	from := time.Now()
	if err := sleep(ctx, d); err != nil {
		return apiaudit.Count{}, err
	}
	return env.OperatorRequests(from, from.Add(d))
}

// measureHappy fails the gateway's node, counts the remediation's requests
// up to Succeeded and for 10 s after, then recovers the node and counts the
// clean-up until NHC's deletion of the CR is complete.
func measureHappy(ctx context.Context, env *harness.Env, gw *harness.Gateway) (happyRun, error) {
	run, err := env.Fail(ctx, gw, nil)
	if err != nil {
		return happyRun{}, err
	}
	res := happyRun{Node: run.Node}
	if err := run.Wait(ctx, harness.RemediationSucceeded, 3*time.Minute); err != nil {
		return res, fmt.Errorf("remediation of %s: %w", run.Node, err)
	}
	succeededSeen := time.Now()
	if err := sleep(ctx, settle); err != nil {
		return res, err
	}
	all, err := apiaudit.Read(env.Cluster.AuditLogPath(), nil)
	if err != nil {
		return res, err
	}
	created, ok := firstRequest(all, run.FailedAt, func(r apiaudit.Request) bool {
		return r.Verb == "create" && r.Resource == "s3gwremediations"
	})
	if !ok {
		return res, fmt.Errorf("no create of an S3GWRemediation after %s failed in the audit log", run.Node)
	}
	// The Succeeded condition became visible with the operator's last
	// status write before the watch event reached the benchmark.
	var succeeded time.Time
	for _, r := range apiaudit.Between(all, created, succeededSeen) {
		if r.User == harness.OperatorUser && r.Resource == "s3gwremediations" && r.Subresource == "status" && r.Verb != "get" {
			succeeded = r.Received
		}
	}
	if succeeded.IsZero() {
		return res, fmt.Errorf("no status write of the operator for %s in the audit log", run.Node)
	}
	mine := keep(all, apiaudit.ByUser(harness.OperatorUser))
	res.Took = succeeded.Sub(created)
	res.CRToSucceeded = apiaudit.Tally(apiaudit.Between(mine, created, succeeded.Add(time.Nanosecond)))
	res.AfterSucceeded = apiaudit.Tally(apiaudit.Between(mine, succeeded.Add(time.Nanosecond), succeeded.Add(settle)))

	recovered := time.Now()
	if err := env.Recover(ctx, run); err != nil {
		return res, err
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		rem, err := env.RemediationFor(ctx, run.Node)
		return rem == nil, err
	}); err != nil {
		return res, fmt.Errorf("waiting for the remediation of %s to go: %w", run.Node, err)
	}
	if err := sleep(ctx, settle); err != nil {
		return res, err
	}
	res.CleanUp, err = env.OperatorRequests(recovered, time.Now())
	return res, err
}

// measureWaiting fails the blocked gateway's node and counts its
// remediation's requests up to WaitingForFencing, then during window.
func measureWaiting(ctx context.Context, env *harness.Env, gw *harness.Gateway, window time.Duration) (first, waiting apiaudit.Count, err error) {
	run, err := env.Fail(ctx, gw, nil)
	if err != nil {
		return first, waiting, err
	}
	if err := run.Wait(ctx, harness.RemediationCreated, 2*time.Minute); err != nil {
		return first, waiting, err
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		rem, err := env.RemediationFor(ctx, run.Node)
		return rem != nil && rem.Status.Phase == s3gwv1alpha1.PhaseWaitingForFencing, err
	}); err != nil {
		return first, waiting, fmt.Errorf("waiting for the remediation of %s to wait for fencing: %w", run.Node, err)
	}
	if first, err = env.OperatorRequests(run.FailedAt, time.Now()); err != nil {
		return first, waiting, err
	}
	if err := sleep(ctx, settle); err != nil {
		return first, waiting, err
	}
	fmt.Printf("Counting a remediation waiting for fencing for %s ...\n", window)
	waiting, err = countWindow(ctx, env, window)
	return first, waiting, err
}

func firstRequest(reqs []apiaudit.Request, after time.Time, match func(apiaudit.Request) bool) (time.Time, bool) {
	for _, r := range reqs {
		if !r.Received.Before(after) && match(r) {
			return r.Received, true
		}
	}
	return time.Time{}, false
}

func keep(reqs []apiaudit.Request, match func(apiaudit.Request) bool) []apiaudit.Request {
	var out []apiaudit.Request
	for _, r := range reqs {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// per10s scales a count over window to 10 s.
func per10s(total int, window time.Duration) float64 {
	return float64(total) * float64(10*time.Second) / float64(window)
}

func (r *requestsResult) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Operator API requests per remediation, %s\n\n", r.Started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Generated by `go run ./hack/bench requests %s` (`make bench-requests`); method in `docs/benchmark.md`.\n\n", r.Args)
	fmt.Fprintf(&b, "- **Settings:** `%s`\n", r.Settings)
	fmt.Fprintf(&b, "- **Machine:** %s; wall time %s.\n", r.Machine, r.Wall.Round(time.Second))
	fmt.Fprintf(&b, "- **Code:** %s\n", r.Code)
	b.WriteString("- **Counted** from kube-apiserver's audit log: every request authenticated as the manager's own user " +
		"(`" + harness.OperatorUser + "`), the manager being `./cmd/manager` run as its own process. " +
		"Remediations ran one at a time, so each request belongs to the one measured.\n\n")
	b.WriteString("| What | Requests | Goal |\n|---|---|---|\n")
	for _, h := range r.Happy {
		fmt.Fprintf(&b, "| %s: CR created → `Succeeded` (%s) | **%d** | ≤ 60 |\n", h.Node, h.Took.Round(time.Millisecond), h.CRToSucceeded.Total)
	}
	fmt.Fprintf(&b, "| waiting for fencing, per 10 s (%d in %s) | **%.1f** | ≤ 1 |\n",
		r.Waiting.Total, r.WaitWindow, per10s(r.Waiting.Total, r.WaitWindow))
	fmt.Fprintf(&b, "| waiting for fencing: CR created → `WaitingForFencing` | %d | |\n", r.WaitingFirst.Total)
	for _, h := range r.Happy {
		fmt.Fprintf(&b, "| %s: the 10 s after `Succeeded`, node still down | %d | |\n", h.Node, h.AfterSucceeded.Total)
		fmt.Fprintf(&b, "| %s: node back → CR deleted and finalized | %d | |\n", h.Node, h.CleanUp.Total)
	}
	fmt.Fprintf(&b, "| idle, per 10 s (%d in %s) | %.1f | |\n\n", r.Idle.Total, r.IdleWindow, per10s(r.Idle.Total, r.IdleWindow))
	b.WriteString("## By verb and resource\n\n")
	if len(r.Happy) > 0 {
		fmt.Fprintf(&b, "- **CR created → `Succeeded`** (%s): %s\n", r.Happy[0].Node, r.Happy[0].CRToSucceeded)
		fmt.Fprintf(&b, "- **10 s after `Succeeded`** (%s): %s\n", r.Happy[0].Node, r.Happy[0].AfterSucceeded)
		fmt.Fprintf(&b, "- **Clean-up** (%s): %s\n", r.Happy[0].Node, r.Happy[0].CleanUp)
	}
	fmt.Fprintf(&b, "- **Waiting for fencing, %s:** %s\n", r.WaitWindow, r.Waiting)
	fmt.Fprintf(&b, "- **Idle, %s:** %s\n", r.IdleWindow, r.Idle)
	return b.String()
}

func (r *requestsResult) write(dir string) error {
	return writeResults(dir, "requests.json", r, r.markdown(), nil)
}
