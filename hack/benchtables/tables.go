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
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// render is the markdown of marker m's table, for a document in docDir
// (relative to the repository root: links to results are relative to it).
func render(kept []*result, m marker, docDir string) (string, error) {
	t := tables{kept: kept, docDir: docDir}
	pick := func(benchmark string) (*result, error) {
		if m.Dir != "" {
			r, err := named(kept, m.Dir)
			if err == nil && r.Benchmark != benchmark {
				err = fmt.Errorf("bench/results/%s is no %s result", m.Dir, benchmark)
			}
			return r, err
		}
		if r := latest(kept, benchmark); r != nil {
			return r, nil
		}
		return nil, fmt.Errorf("no %s result in bench/results", benchmark)
	}
	switch m.Table {
	case "headline":
		return t.headline()
	case "failover", "failover-steps":
		r, err := pick(failoverBenchmark)
		if err != nil {
			return "", err
		}
		if m.Table == "failover" {
			return t.failover(r), nil
		}
		return t.failoverSteps(r), nil
	case "scale":
		return t.scale()
	case "requests":
		r, err := pick(requestsBenchmark)
		if err != nil {
			return "", err
		}
		return t.requests(r), nil
	case "goals":
		return t.goals(), nil
	case "index":
		return t.index(), nil
	}
	return "", fmt.Errorf("unknown table %q (headline, goals, failover, failover-steps, scale, requests, index)", m.Table)
}

type tables struct {
	kept   []*result
	docDir string
}

// link is a markdown link to r's results.md from the document.
func (t tables) link(r *result) string {
	target := "bench/results/" + r.Dir + "/results.md"
	if rel, err := filepath.Rel(t.docDir, target); err == nil {
		target = filepath.ToSlash(rel)
	}
	return fmt.Sprintf("[%s](%s)", r.Dir, target)
}

// source names a result: its link, version and commit.
func (t tables) source(r *result) string {
	c := r.code()
	commit := "commit not recorded"
	if c.Commit != "" {
		commit = "`" + c.Commit + "`"
	}
	return fmt.Sprintf("%s (%s, %s)", t.link(r), c.Version, commit)
}

// otherWork is how busy other work kept the machine: the machine line's
// closing "(N %)", or "" when it gives none.
var otherWork = regexp.MustCompile(`\((\d+ %)\)$`)

func (t tables) caption(r *result, what string) string {
	s := "From " + t.source(r) + ", " + r.code().Started.UTC().Format("2006-01-02") + ": " + what
	if m := otherWork.FindStringSubmatch(r.code().Machine); m != nil {
		s += "; other work took " + m[1] + " of the machine"
	}
	return s + ".\n"
}

// The shipped setting first, then with the image not on the spare and
// pre-pulled there, then what it is read against.
var headlineModes = []string{"controller-detach", "cold-image", "warm-image", "floor", "oos-at-notready", "longhorn-policy", "none"}

func (t tables) headline() (string, error) {
	f := latest(t.kept, failoverBenchmark)
	if f == nil {
		return "", fmt.Errorf("no failover result in bench/results")
	}
	var b strings.Builder
	b.WriteString("| Measured | Result | Run (version, commit) |\n|---|---|---|\n")
	first := true
	for _, name := range headlineModes {
		m := f.Failover.mode(name)
		if m == nil {
			continue
		}
		what, src := "… "+m.Title, ""
		if first {
			what = fmt.Sprintf("s3gw back after its node dies, p50 / p99 (RTO, %d failures per mode): %s", f.Failover.RunsPerMode, m.Title)
			src = t.source(f)
		}
		cell := p50p99(m.rto(), f.Failover)
		if m.recovered() == 0 {
			cell = fmt.Sprintf("not back within %s (0/%d)", seconds(f.Failover.Window.Seconds()), len(m.Runs))
		} else if first {
			cell = "**" + cell + "**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", what, cell, src)
		first = false
	}
	if m := f.Failover.mode("controller-detach"); m != nil {
		fmt.Fprintf(&b, "| S3GWRemediation created → volume released, p50 / p99 | %s | |\n", p50p99(m.crToReleased(), f.Failover))
	}
	for _, c := range latestScale(t.kept) {
		fail := c.Result.Scale.Fail
		fmt.Fprintf(&b, "| %s nodes, %d failing at once: replaced; created → released, p50 / p99 | %d/%d; %s | %s |\n",
			thousands(c.Run.Nodes), fail, c.Run.Replaced, fail, p50p99(c.Run.CRToReleased, nil), t.source(c.Result))
		fmt.Fprintf(&b, "| … manager peak memory (RSS); API requests per remediation | %s; %.0f | |\n",
			mib(c.Run.After.PeakRSS), float64(c.Run.Requests.Total)/float64(fail))
	}
	return b.String(), nil
}

func (t tables) failover(r *result) string {
	f := r.Failover
	floor := f.mode("floor")
	var b strings.Builder
	b.WriteString("| Mode | Recovered | RTO p50 / p90 / p99 |")
	if floor != nil {
		b.WriteString(" above the floor p50 / p99 |")
	}
	b.WriteString(" CR → Ready p50 / p99 | CR → released p50 / p99 |\n|---|---|---|")
	if floor != nil {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	for i := range f.Modes {
		m := &f.Modes[i]
		rto := m.rto()
		fmt.Fprintf(&b, "| %s | %d/%d | %s / %s / %s |", m.Title, m.recovered(), len(m.Runs),
			cell(rto.P50, rto.Count, f), cell(rto.P90, rto.Count, f), cell(rto.P99, rto.Count, f))
		switch {
		case m == floor:
			b.WriteString(" — |")
		case floor != nil:
			fl := floor.rto()
			fmt.Fprintf(&b, " %s / %s |", above(rto.P50, fl.P50), above(rto.P99, fl.P99))
		}
		fmt.Fprintf(&b, " %s | %s |\n", p50p99(m.crToReady(), f), p50p99(m.crToReleased(), f))
	}
	what := fmt.Sprintf("%d failures per mode, NodeHealthCheck unhealthy duration %s", f.RunsPerMode, duration(f.NHCDuration))
	if f.Requests != nil && f.Remediations > 0 {
		what += fmt.Sprintf(", %.0f API requests per remediation", float64(f.Requests.Total)/float64(f.Remediations))
	}
	return b.String() + "\n" + t.caption(r, what)
}

// The milestones of failoverSteps, as hack/bench names them.
var steps = []string{"node NotReady", "S3GWRemediation created", "old pod gone",
	"attachment released from the dead node", "replacement's volume attached", "replacement Ready"}

func (t tables) failoverSteps(r *result) string {
	var b strings.Builder
	b.WriteString("| Mode (median, seconds after the node was lost) | " + strings.Join(steps, " | ") + " |\n|---|" +
		strings.Repeat("---|", len(steps)) + "\n")
	for i := range r.Failover.Modes {
		m := &r.Failover.Modes[i]
		b.WriteString("| " + m.Title + " |")
		for _, s := range steps {
			switch v, n := m.median(s); {
			case n == 0:
				b.WriteString(" — |")
			case n < len(m.Runs):
				fmt.Fprintf(&b, " %s (%d/%d) |", seconds(*v), n, len(m.Runs))
			default:
				fmt.Fprintf(&b, " %s |", seconds(*v))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (t tables) scale() (string, error) {
	cols := latestScale(t.kept)
	if len(cols) == 0 {
		return "", fmt.Errorf("no scale result in bench/results")
	}
	var b strings.Builder
	b.WriteString("| 20 gateway nodes failing at once |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s nodes, %s pods |", thousands(c.Run.Nodes), thousands(c.Run.Pods))
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	row := func(name string, f func(scaleColumn) string) {
		b.WriteString("| " + name + " |")
		for _, c := range cols {
			b.WriteString(" " + f(c) + " |")
		}
		b.WriteString("\n")
	}
	spans := func(f func(scaleRun) stats) func(scaleColumn) string {
		return func(c scaleColumn) string { return p50p99(f(c.Run), nil) }
	}
	row("gateways replaced", func(c scaleColumn) string { return fmt.Sprintf("%d/%d", c.Run.Replaced, c.Result.Scale.Fail) })
	row("CR → released, p50 / p99", spans(func(r scaleRun) stats { return r.CRToReleased }))
	row("… CR → Longhorn's ticket removed (the operator)", spans(func(r scaleRun) stats { return r.CRToTicketRemoval }))
	row("… → the force delete (the simulated Longhorn stops the engine and replicas)",
		spans(func(r scaleRun) stats { return r.TicketRemovalToForceDelete }))
	row("… → the release write (the operator)", spans(func(r scaleRun) stats { return r.ForceDeleteToReleaseWrite }))
	row("… → released (kube-controller-manager's detach)", spans(func(r scaleRun) stats { return r.ReleaseWriteToReleased }))
	row("node NotReady → CR (the NodeHealthCheck)", spans(func(r scaleRun) stats { return r.NotReadyToCR }))
	row("CR → replacement Ready", spans(func(r scaleRun) stats { return r.CRToReady }))
	row("RTO", spans(func(r scaleRun) stats { return r.RTO }))
	row("manager peak RSS", func(c scaleColumn) string { return mib(c.Run.After.PeakRSS) })
	row("… before the failures: anonymous + the binary's pages", func(c scaleColumn) string {
		return fmt.Sprintf("%s + %s", mib(c.Run.Before.Anon), mib(c.Run.Before.File))
	})
	row("live heap before the failures", func(c scaleColumn) string {
		for _, h := range c.Run.Heap {
			if h.Label == "before the failures" {
				return mib(h.Live)
			}
		}
		return "—"
	})
	row("manager CPU, failures → all Succeeded", func(c scaleColumn) string {
		return fmt.Sprintf("%.1f s", (c.Run.After.CPU - c.Run.Before.CPU).Seconds())
	})
	row("API requests per remediation", func(c scaleColumn) string {
		return fmt.Sprintf("%.0f", float64(c.Run.Requests.Total)/float64(c.Result.Scale.Fail))
	})
	row("run (version, commit)", func(c scaleColumn) string { return t.source(c.Result) })
	return b.String(), nil
}

func (t tables) requests(r *result) string {
	q := r.Requests
	var b strings.Builder
	b.WriteString("| Requests of the operator | Count |\n|---|---|\n")
	for _, h := range q.Happy {
		fmt.Fprintf(&b, "| %s: CR created → `Succeeded` (%.1f s) | **%d** |\n", h.Node, h.Took.Seconds(), h.CRToSucceeded.Total)
	}
	for _, h := range q.Happy {
		fmt.Fprintf(&b, "| %s: the 10 s after `Succeeded`, node still down; node back → CR deleted | %d; %d |\n",
			h.Node, h.AfterSucceded.Total, h.CleanUp.Total)
	}
	fmt.Fprintf(&b, "| waiting for fencing: CR created → `WaitingForFencing` | %d |\n", q.WaitingFirst.Total)
	fmt.Fprintf(&b, "| waiting for fencing, per 10 s (%d in %s) | **%.1f** |\n", q.Waiting.Total, duration(q.WaitWindow),
		per10s(q.Waiting.Total, q.WaitWindow.Seconds()))
	fmt.Fprintf(&b, "| idle, per 10 s (%d in %s) | %.1f |\n", q.Idle.Total, duration(q.IdleWindow), per10s(q.Idle.Total, q.IdleWindow.Seconds()))
	return b.String() + "\n" + t.caption(r, "remediations one at a time, compressed timings")
}

// memoryGoals are the manager's peak RSS goals by node count.
var memoryGoals = map[int]int64{1000: 64 << 20, 3000: 80 << 20}

// goals is each of the product's measured goals against the latest result
// that measures it.
func (t tables) goals() string {
	var b strings.Builder
	b.WriteString("| Goal | Measured | | Run |\n|---|---|---|---|\n")
	row := func(goal, measured string, met bool, r *result) {
		verdict := "met"
		if !met {
			verdict = "**missed**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", goal, measured, verdict, t.link(r))
	}
	if f := latest(t.kept, failoverBenchmark); f != nil {
		floor, shipped := f.Failover.mode("floor"), f.Failover.mode("controller-detach")
		if floor != nil && shipped != nil {
			fl, sh := floor.rto(), shipped.rto()
			if fl.P99 != nil && sh.P99 != nil {
				row("s3gw back within the physical floor + 5 s at p99 (RTO, shipped setting)",
					above(sh.P99, fl.P99), *sh.P99-*fl.P99 <= 5, f)
			}
			if rel := shipped.crToReleased(); rel.P99 != nil {
				row("S3GWRemediation created → volume released within 1 s at p99 ("+
					fmt.Sprint(len(shipped.Runs))+" failures)", seconds(*rel.P99), *rel.P99 <= 1, f)
			}
		}
		if f.Failover.Requests != nil && f.Failover.Remediations > 0 {
			n := float64(f.Failover.Requests.Total) / float64(f.Failover.Remediations)
			row("at most 60 API requests per remediation", fmt.Sprintf("%.0f", n), n <= 60, f)
		}
	}
	for _, c := range latestScale(t.kept) {
		nodes, fail := thousands(c.Run.Nodes), c.Result.Scale.Fail
		row(fmt.Sprintf("%s nodes, %d failing: every gateway replaced", nodes, fail),
			fmt.Sprintf("%d/%d", c.Run.Replaced, fail), c.Run.Replaced == fail, c.Result)
		if p99 := c.Run.CRToReleased.P99; p99 != nil {
			row(fmt.Sprintf("%s nodes: S3GWRemediation created → volume released within 1 s at p99", nodes),
				seconds(*p99), *p99 <= 1, c.Result)
		}
		if goal, ok := memoryGoals[c.Run.Nodes]; ok {
			row(fmt.Sprintf("%s nodes: manager peak RSS at most %d MiB", nodes, goal>>20), mib(c.Run.After.PeakRSS),
				c.Run.After.PeakRSS <= goal, c.Result)
		}
		n := float64(c.Run.Requests.Total) / float64(fail)
		row(fmt.Sprintf("%s nodes: at most 60 API requests per remediation", nodes), fmt.Sprintf("%.0f", n), n <= 60, c.Result)
	}
	if r := latest(t.kept, requestsBenchmark); r != nil && r.Requests.WaitWindow > 0 {
		n := per10s(r.Requests.Waiting.Total, r.Requests.WaitWindow.Seconds())
		row("at most 1 API request per 10 s while waiting for fencing", fmt.Sprintf("%.1f", n), n <= 1, r)
	}
	return b.String()
}

func (t tables) index() string {
	var b strings.Builder
	b.WriteString("| Result | Benchmark | Started (UTC) | Version | Commit |\n|---|---|---|---|---|\n")
	for _, r := range t.kept {
		c := r.code()
		commit := "not recorded"
		if c.Commit != "" {
			commit = "`" + c.Commit + "`"
		}
		fmt.Fprintf(&b, "| %s | %s%s | %s | %s | %s |\n", t.link(r), r.Benchmark, r.Variant,
			c.Started.UTC().Format("2006-01-02 15:04"), c.Version, commit)
	}
	return b.String()
}

// seconds is hack/bench's format, with two decimals under a second.
func seconds(s float64) string {
	switch {
	case s >= 100:
		return fmt.Sprintf("%.0f s", s)
	case s >= 1:
		return fmt.Sprintf("%.1f s", s)
	default:
		return fmt.Sprintf("%.2f s", s)
	}
}

// cell is a percentile: "—" when no run got a value, "> window" for runs
// that never got there.
func cell(v *float64, n int, f *failoverResult) string {
	switch {
	case n == 0:
		return "—"
	case v == nil && f != nil:
		return "> " + seconds(f.Window.Seconds())
	case v == nil:
		return "never"
	default:
		return seconds(*v)
	}
}

func p50p99(s stats, f *failoverResult) string {
	if s.Count == 0 {
		return "—"
	}
	return cell(s.P50, s.Count, f) + " / " + cell(s.P99, s.Count, f)
}

func above(v, floor *float64) string {
	if v == nil || floor == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f s", *v-*floor)
}

// duration is d as the docs write it: "2 s", "60 s", "5 min".
func duration(d time.Duration) string {
	if d >= 2*time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%g s", d.Seconds())
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func per10s(n int, window float64) float64 {
	if window <= 0 {
		return 0
	}
	return float64(n) * 10 / window
}

// thousands writes 3000 as "3 000", as the docs do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}
