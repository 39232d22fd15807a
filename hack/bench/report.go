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
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// result is what a benchmark measured, as written to runs.json.
type result struct {
	measuredCode

	Args        string        `json:"args"`
	Settings    string        `json:"settings"`
	Machine     string        `json:"machine"`
	Started     time.Time     `json:"started"`
	Wall        time.Duration `json:"wallNanoseconds"`
	N           int           `json:"runsPerMode"`
	Window      time.Duration `json:"windowNanoseconds"`
	NHCDuration time.Duration `json:"nhcDurationNanoseconds"`
	AttachDelay time.Duration `json:"attachDelayNanoseconds"`
	// Grace and Eviction are when Kubernetes declares a lost node NotReady
	// and, after that, evicts its pods.
	Grace    time.Duration `json:"nodeMonitorGracePeriodNanoseconds"`
	Eviction time.Duration `json:"evictionNanoseconds"`
	Modes    []modeResult  `json:"modes"`
	// OperatorRequests are the operator's API requests from the first
	// failure to the end, and Remediations the S3GWRemediations it handled
	// meanwhile (all modes).
	OperatorRequests *apiaudit.Count `json:"operatorRequests,omitempty"`
	Remediations     int             `json:"remediations,omitempty"`

	// ImagePullTime is the cold-image mode's simulated pull on the spare.
	ImagePullTime time.Duration `json:"imagePullTimeNanoseconds,omitempty"`
}

type modeResult struct {
	Name  string      `json:"name"`
	Title string      `json:"title"`
	Runs  []runResult `json:"runs"`
	// RTO is node failure → replacement Ready; CRToReady is S3GWRemediation
	// created → replacement Ready; ControllerShare is CRToReady without the
	// simulated Longhorn attach delay.
	RTO             stats `json:"rto"`
	CRToReady       stats `json:"crToReady"`
	ControllerShare stats `json:"controllerShare"`
	// CRToReleased is S3GWRemediation created → no VolumeAttachment left on
	// the dead node: the operator's own part, before the attach-detach
	// controller, Longhorn and the kubelet take over.
	CRToReleased stats `json:"crToReleased"`
}

type runResult struct {
	Node            string `json:"node"`
	Recovered       bool   `json:"recovered"`
	ReplacementNode string `json:"replacementNode,omitempty"`
	Stuck           string `json:"stuck,omitempty"`
	// Milestones are seconds since the node was lost.
	Milestones map[string]float64 `json:"milestones"`
	// Phases are the S3GWRemediation's phases, in the order seen, with
	// seconds since the node was lost.
	Phases []phaseResult `json:"phases,omitempty"`
	// WallClockStep is how far the machine's wall clock moved against the
	// monotonic one between the node's loss and the CR (seconds; scale
	// bench): milestones read from the audit log are corrected by it.
	WallClockStep float64 `json:"wallClockStepSeconds,omitempty"`
}

type phaseResult struct {
	Phase string  `json:"phase"`
	At    float64 `json:"at"`
}

// stats are nearest-rank percentiles in seconds; +Inf (JSON null) stands for
// runs that did not get there within the window.
type stats struct {
	Count int      `json:"count"`
	P50   *float64 `json:"p50"`
	P90   *float64 `json:"p90"`
	P99   *float64 `json:"p99"`
	Max   *float64 `json:"max"`
	Min   *float64 `json:"min"`
}

func summarize(cfg config, runs []*benchRun, attachDelay time.Duration) *result {
	res := &result{N: cfg.n, Window: cfg.window, NHCDuration: cfg.nhcDuration, AttachDelay: attachDelay}
	for _, m := range cfg.modes {
		mr := modeResult{Name: m.Name, Title: m.Title}
		var rto, crToReady, share []float64
		for _, r := range runs {
			if r.mode.Name != m.Name {
				continue
			}
			rr := runResult{Node: r.node, Stuck: r.stuck, Milestones: map[string]float64{}}
			for _, e := range r.run.Timeline() {
				rr.Milestones[e.Milestone.String()] = e.After.Seconds()
			}
			for _, p := range r.run.Phases() {
				rr.Phases = append(rr.Phases, phaseResult{Phase: string(p.Phase), At: p.After.Seconds()})
			}
			ready, ok := r.run.Seen(harness.ReplacementReady)
			rr.Recovered = ok
			_, rr.ReplacementNode = r.run.Replacement()
			mr.Runs = append(mr.Runs, rr)
			if !ok {
				rto = append(rto, math.Inf(1))
				if m.operator() {
					crToReady = append(crToReady, math.Inf(1))
					share = append(share, math.Inf(1))
				}
				continue
			}
			rto = append(rto, ready.Seconds())
			if d, ok := r.run.Between(harness.RemediationCreated, harness.ReplacementReady); ok && m.operator() {
				crToReady = append(crToReady, d.Seconds())
				share = append(share, (d - attachDelay).Seconds())
			}
		}
		mr.RTO, mr.CRToReady, mr.ControllerShare = newStats(rto), newStats(crToReady), newStats(share)
		mr.deriveCRToReleased()
		res.Modes = append(res.Modes, mr)
	}
	return res
}

// deriveCRToReleased computes CRToReleased from the runs' milestones, so
// that results measured before it existed get it too.
func (mr *modeResult) deriveCRToReleased() {
	var v []float64
	for _, run := range mr.Runs {
		created, ok := run.Milestones[harness.RemediationCreated.String()]
		if !ok {
			continue
		}
		released, ok := run.Milestones[harness.AttachmentReleased.String()]
		if !ok {
			released = math.Inf(1)
		}
		v = append(v, released-created)
	}
	mr.CRToReleased = newStats(v)
}

func newStats(v []float64) stats {
	s := stats{Count: len(v)}
	if len(v) == 0 {
		return s
	}
	slices.Sort(v)
	s.P50, s.P90, s.P99 = finite(percentile(v, 0.5)), finite(percentile(v, 0.9)), finite(percentile(v, 0.99))
	s.Max, s.Min = finite(v[len(v)-1]), finite(v[0])
	return s
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func finite(f float64) *float64 {
	if math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func (r *result) cell(v *float64, count int) string {
	switch {
	case count == 0:
		return "—"
	case v == nil:
		return "> " + fmtSeconds(r.Window.Seconds())
	default:
		return fmtSeconds(*v)
	}
}

func fmtSeconds(s float64) string {
	if s >= 100 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

// table is the main result, in markdown. With the floor measured, each
// mode's RTO is also given above the floor's, percentile for percentile.
func (r *result) table() string {
	var b strings.Builder
	floor := slices.IndexFunc(r.Modes, func(m modeResult) bool { return m.Name == floorMode })
	aboveFloor := func(modeResult) string { return "" }
	if floor >= 0 {
		f := r.Modes[floor].RTO
		above := func(v, fv *float64) string {
			if v == nil || fv == nil {
				return "—"
			}
			return fmt.Sprintf("%+.1f s", *v-*fv)
		}
		aboveFloor = func(m modeResult) string { return above(m.RTO.P50, f.P50) + " / " + above(m.RTO.P99, f.P99) + " | " }
	}
	b.WriteString("| Mode | Recovered | RTO p50 | RTO p90 | RTO p99 | ")
	if floor >= 0 {
		b.WriteString("RTO above the floor p50 / p99 | ")
	}
	b.WriteString("CR → Ready p50 | p99 | Controller share p50 | p99 | CR → released p50 | p99 |\n")
	b.WriteString("|---|---|---|---|---|" + strings.Repeat("---|", 6+min(floor+1, 1)) + "\n")
	for _, m := range r.Modes {
		recovered := 0
		for _, run := range m.Runs {
			if run.Recovered {
				recovered++
			}
		}
		fmt.Fprintf(&b, "| %s | %d/%d | %s | %s | %s | %s%s | %s | %s | %s | %s | %s |\n", m.Title, recovered, len(m.Runs),
			r.cell(m.RTO.P50, m.RTO.Count), r.cell(m.RTO.P90, m.RTO.Count), r.cell(m.RTO.P99, m.RTO.Count), aboveFloor(m),
			r.cell(m.CRToReady.P50, m.CRToReady.Count), r.cell(m.CRToReady.P99, m.CRToReady.Count),
			r.cell(m.ControllerShare.P50, m.ControllerShare.Count), r.cell(m.ControllerShare.P99, m.ControllerShare.Count),
			r.cell(m.CRToReleased.P50, m.CRToReleased.Count), r.cell(m.CRToReleased.P99, m.CRToReleased.Count))
	}
	return b.String()
}

// breakdown is the median time of each milestone per mode.
func (r *result) breakdown() string {
	shown := []harness.Milestone{
		harness.NodeNotReady, harness.RemediationCreated, harness.OldPodTerminating, harness.Fenced,
		harness.OldPodGone, harness.AttachmentReleased, harness.ReplacementScheduled,
		harness.ReplacementAttached, harness.ReplacementReady,
	}
	var b strings.Builder
	b.WriteString("| Mode |")
	for _, m := range shown {
		fmt.Fprintf(&b, " %s |", m)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(shown)) + "\n")
	for _, mr := range r.Modes {
		fmt.Fprintf(&b, "| %s |", mr.Title)
		for _, m := range shown {
			var v []float64
			for _, run := range mr.Runs {
				if s, ok := run.Milestones[m.String()]; ok {
					v = append(v, s)
				}
			}
			switch {
			case len(v) == 0:
				b.WriteString(" — |")
			case len(v) < len(mr.Runs):
				slices.Sort(v)
				fmt.Fprintf(&b, " %s (%d/%d) |", fmtSeconds(percentile(v, 0.5)), len(v), len(mr.Runs))
			default:
				slices.Sort(v)
				fmt.Fprintf(&b, " %s |", fmtSeconds(percentile(v, 0.5)))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (r *result) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# s3gw failover benchmark, %s\n\n", r.Started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Generated by `go run ./hack/bench %s` (`make bench-failover`); method in `docs/benchmark.md`.\n\n", r.Args)
	fmt.Fprintf(&b, "- **Timings in force:** `%s`\n", r.Settings)
	fmt.Fprintf(&b, "- **NodeHealthCheck unhealthy duration:** %s; **runs per mode:** %d, all in one cluster, each in its own zone "+
		"(a failing node and a spare), failures started a few seconds apart.\n", r.NHCDuration, r.N)
	fmt.Fprintf(&b, "- **Window:** a run that has no Ready replacement %s after its node failed counts as not recovered (shown as `> %s`).\n",
		r.Window, fmtSeconds(r.Window.Seconds()))
	if r.ImagePullTime > 0 {
		fmt.Fprintf(&b, "- **Image pull:** in the cold-image mode the spare lacks s3gw's image; its replacement starts %s after its volume "+
			"is attached (a simulated pull: kwok's pod-ready Stage delays it). The warm-image mode fails its node once the protection report "+
			"shows the pre-pull pod running on the spare.\n", r.ImagePullTime)
	}
	fmt.Fprintf(&b, "- **Machine:** %s; wall time %s.\n", r.Machine, r.Wall.Round(time.Second))
	fmt.Fprintf(&b, "- **Code:** %s\n\n", r.Code)
	b.WriteString("RTO is node failure (kubelet stopped) → replacement gateway Ready on the spare node. " +
		"CR → Ready starts when NodeHealthCheck created the S3GWRemediation. Controller share is CR → Ready minus the " +
		fmt.Sprintf("simulated Longhorn attach delay (%s); it still includes the attach-detach controller, scheduler and simulated kubelet. ", r.AttachDelay) +
		"CR → released ends when no VolumeAttachment of the volume is left on the dead node: the operator's own part. " +
		"Percentiles are nearest-rank: with 20 runs, p99 is the slowest run.\n\n")
	b.WriteString(r.table())
	if c := r.OperatorRequests; c != nil && r.Remediations > 0 {
		fmt.Fprintf(&b, "\nThe operator made **%d API requests** from the first failure to the end of the run, for %d remediations "+
			"(%.0f per remediation, all phases, concurrent remediations included; counted from kube-apiserver's audit log by its identity): %s.\n",
			c.Total, r.Remediations, float64(c.Total)/float64(r.Remediations), c)
	}
	b.WriteString("\n![RTO per mode](rto.svg)\n\n")
	b.WriteString("## Median time of each step (seconds after the node was lost)\n\n")
	b.WriteString(r.breakdown())
	var stuck []string
	for _, m := range r.Modes {
		for _, run := range m.Runs {
			if !run.Recovered {
				stuck = append(stuck, fmt.Sprintf("- %s, node %s: %s", m.Title, run.Node, run.Stuck))
			}
		}
	}
	if len(stuck) > 0 {
		b.WriteString("\n## Runs that did not recover within the window\n\n" + strings.Join(stuck, "\n") + "\n")
	}
	b.WriteString("\nPer-run timelines: `runs.json`.\n")
	return b.String()
}

func (r *result) write(dir string) error {
	return writeResults(dir, "runs.json", r, r.markdown(), map[string]string{"rto.svg": r.svg()})
}

// rewrite regenerates a result directory's report from its runs.json.
func rewrite(runsJSON string) error {
	data, err := os.ReadFile(runsJSON)
	if err != nil {
		return err
	}
	res := &result{}
	if err := json.Unmarshal(data, res); err != nil {
		return fmt.Errorf("decoding %s: %w", runsJSON, err)
	}
	for i := range res.Modes {
		res.Modes[i].deriveCRToReleased()
	}
	return res.write(filepath.Dir(runsJSON))
}
