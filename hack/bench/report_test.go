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
	"math"
	"strings"
	"testing"
	"time"
)

func TestNearestRankPercentiles(t *testing.T) {
	s := newStats([]float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6})
	if *s.P50 != 5 || *s.P90 != 9 || *s.P99 != 10 || *s.Max != 10 || *s.Min != 1 {
		t.Errorf("stats = p50 %v p90 %v p99 %v max %v min %v, want 5, 9, 10, 10, 1", *s.P50, *s.P90, *s.P99, *s.Max, *s.Min)
	}
	one := newStats([]float64{42})
	if *one.P50 != 42 || *one.P90 != 42 {
		t.Errorf("one value: p50 %v p90 %v, want 42", *one.P50, *one.P90)
	}
}

func TestRunsThatNeverRecoveredCountAsBeyondTheWindow(t *testing.T) {
	inf := math.Inf(1)
	s := newStats([]float64{inf, 300, inf, 310})
	if *s.P50 != 310 || s.P90 != nil || s.Max != nil {
		t.Errorf("stats = %+v, want p50 310 and p90, max beyond the window", s)
	}
	r := &result{Window: 770 * time.Second}
	if got := r.cell(s.P90, s.Count); got != "> 770 s" {
		t.Errorf("cell = %q, want \"> 770 s\"", got)
	}
	if got := r.cell(nil, 0); got != "—" {
		t.Errorf("cell without values = %q, want —", got)
	}
}

func TestSVGIsWellFormedAndMarksStuckRuns(t *testing.T) {
	r := &result{N: 1, Window: 2 * time.Minute, Grace: 10 * time.Second, Eviction: 10 * time.Second,
		Settings: "timings=compressed x=y", AttachDelay: 1500 * time.Millisecond}
	stuck := modeResult{Name: "none", Title: "no remediation", RTO: newStats([]float64{math.Inf(1)}),
		Runs: []runResult{{Node: "none-0", Milestones: map[string]float64{}}}}
	r.Modes = []modeResult{stuck}
	svg := r.svg()
	if !strings.HasPrefix(svg, "<svg") || !strings.HasSuffix(svg, "</svg>\n") {
		t.Fatalf("not an SVG document: %.80q…", svg)
	}
	if !strings.Contains(svg, "1/1 never recovered within 2m0s") {
		t.Error("stuck run not marked")
	}
}

func TestTableReadsEveryModeAgainstTheFloor(t *testing.T) {
	mode := func(name string, rto ...float64) modeResult {
		runs := make([]runResult, len(rto))
		for i := range runs {
			runs[i].Recovered = !math.IsInf(rto[i], 1)
		}
		return modeResult{Name: name, Title: name, Runs: runs, RTO: newStats(rto)}
	}
	r := &result{Window: 770 * time.Second, Modes: []modeResult{
		mode(floorMode, 52, 53, 60), mode("controller-detach", 55, 56, 63.5), mode("none", math.Inf(1)),
	}}
	containsAll(t, "table", r.table(),
		"| Mode | Recovered | RTO p50 | RTO p90 | RTO p99 | RTO above the floor p50 / p99 | CR → Ready p50 |",
		"|---|---|---|---|---|---|---|---|---|---|---|---|\n",
		"| floor | 3/3 | 53.0 s | 60.0 s | 60.0 s | +0.0 s / +0.0 s | — |",
		"| controller-detach | 3/3 | 56.0 s | 63.5 s | 63.5 s | +3.0 s / +3.5 s | — |",
		"| none | 0/1 | > 770 s | > 770 s | > 770 s | — / — | — |")
	r.Modes = r.Modes[1:]
	containsAll(t, "table without the floor", r.table(),
		"| Mode | Recovered | RTO p50 | RTO p90 | RTO p99 | CR → Ready p50 |", "|---|---|---|---|---|---|---|---|---|---|---|\n",
		"| controller-detach | 3/3 | 56.0 s | 63.5 s | 63.5 s | — |")
}
