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
