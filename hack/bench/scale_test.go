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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

func TestScaleTableHasAColumnPerClusterSize(t *testing.T) {
	run := func(nodes int, peak int64) scaleRun {
		return scaleRun{clusterSize: clusterSize{Nodes: nodes, Pods: nodes * 11 / 10}, Replaced: 20, Succeeded: 20,
			CRToReady: newStats([]float64{3, 4, 4.5}), CRToReleased: newStats([]float64{0.2, 0.4, 0.9}),
			CRToReleaseWrite: newStats([]float64{0.1, 0.3, 0.6}), ReleaseWriteToReleased: newStats([]float64{0.1, 0.1, 0.3}),
			SetUp: cluster.Usage{CPU: time.Second}, Before: cluster.Usage{CPU: 2 * time.Second, RSS: peak - 8<<20},
			After:    cluster.Usage{PeakRSS: peak, CPU: 12 * time.Second},
			Heap:     []heapSnapshot{{Label: "before the failures", HeapInuse: peak / 2, Live: peak / 4}, {Label: "peak", HeapInuse: peak * 3 / 4}},
			Requests: apiaudit.Count{Total: 1000}, Idle: apiaudit.Count{Total: 3}, IdleWindow: 30 * time.Second, FailureSpan: time.Minute}
	}
	r := &scaleResult{Fail: 20, Runs: []scaleRun{run(1000, 40<<20), run(3000, 50<<20)}}
	containsAll(t, "table", r.table(),
		"| | 1000 nodes, 1100 pods | 3000 nodes, 3300 pods | Goal |",
		"| gateways replaced | 20/20 | 20/20 | all 20 |",
		"| CR → released p50 / p99 | 0.4 s / 0.9 s | 0.4 s / 0.9 s | p99 ≤ 1 s |",
		"| of which CR → the operator's release write p50 / p99 | 0.3 s / 0.6 s | 0.3 s / 0.6 s |  |",
		"| and its release write → released (kube-controller-manager's detach) p50 / p99 | 0.1 s / 0.3 s |",
		"| manager peak RSS (VmHWM) | 40.0 MiB | 50.0 MiB |",
		"| heap in use before the failures / at the peak | 20.0 MiB / 30.0 MiB | 25.0 MiB / 37.5 MiB |  |",
		"| manager CPU idle, per minute | 2.00 s | 2.00 s |  |",
		"| manager CPU, failures → all Succeeded | 10.0 s | 10.0 s |  |",
		"| API requests, failures → all Succeeded | 1000 (50 per remediation, 1m0s) |",
		"| API requests idle, per 10 s | 1.0 | 1.0 | 0 |")
	containsAll(t, "per-node table", r.perNode(),
		"| Per node, 1000 → 3000 nodes | |",
		"| manager peak RSS | 5.1 KiB |",
		"| heap in use before the failures | 2.6 KiB |",
		"| manager CPU idle, per minute | 0.00 ms |")
}

// containsAll fails t for each of wants that text lacks.
func containsAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}

func TestClusterSizes(t *testing.T) {
	for _, tc := range []struct {
		nodes, pods string
		want        []clusterSize
		name        string // the result directory's, after the date
		err         bool
	}{
		{nodes: "1000,3000", want: []clusterSize{{1000, 1100}, {3000, 3300}}, name: "scale-1000-3000"},
		{nodes: "1000", pods: "1100,2200", want: []clusterSize{{1000, 1100}, {1000, 2200}}, name: "scale-1000"},
		{nodes: "60", want: []clusterSize{{60, 100}}, name: "scale-60"}, // never fewer pods than gateways
		{nodes: "1000", pods: "50", err: true},
		{nodes: "x", err: true},
	} {
		got, err := clusterSizes(tc.nodes, tc.pods, 1.1, 100)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("clusterSizes(%q, %q) = %v, %v; want %v (error %v)", tc.nodes, tc.pods, got, err, tc.want, tc.err)
		}
		if err == nil && scaleName(got) != tc.name {
			t.Errorf("scaleName(%v) = %q, want %q", got, scaleName(got), tc.name)
		}
	}
}

func TestFailureWindowGrowsWithTheNodes(t *testing.T) {
	for nodes, want := range map[int]time.Duration{100: 5 * time.Minute, 1000: 5 * time.Minute, 3000: 15 * time.Minute} {
		if got := failureWindow(nodes); got != want {
			t.Errorf("failureWindow(%d) = %s, want %s", nodes, got, want)
		}
	}
}

func TestRequestsPer10s(t *testing.T) {
	if got := per10s(195, 30*time.Second); got != 65 {
		t.Errorf("per10s(195, 30s) = %v, want 65", got)
	}
	r := &requestsResult{WaitWindow: time.Minute, Waiting: apiaudit.Count{Total: 6},
		Happy: []happyRun{{Node: "happy-0", CRToSucceeded: apiaudit.Count{Total: 42}, Took: 3 * time.Second}}}
	containsAll(t, "markdown", r.markdown(), "| happy-0: CR created → `Succeeded` (3s) | **42** | ≤ 60 |",
		"| waiting for fencing, per 10 s (6 in 1m0s) | **1.0** | ≤ 1 |")
}

func TestMachineBusyTimeIncludesOwnCPU(t *testing.T) {
	busy0, err := machineBusy()
	if err != nil {
		t.Fatal(err)
	}
	own0 := ownCPU()
	// Burn 200 ms of CPU, however long the shared machine takes to give it.
	for deadline := time.Now().Add(30 * time.Second); ownCPU()-own0 < 200*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("own CPU grew by only %s in 30 s", ownCPU()-own0)
		}
	}
	busy1, err := machineBusy()
	if err != nil {
		t.Fatal(err)
	}
	// Both count in the kernel's 10 ms ticks.
	if busy := busy1 - busy0; busy < 180*time.Millisecond {
		t.Errorf("machine busy time grew by %s while this process used 200 ms of CPU", busy)
	}
}

func TestCommandLineQuotesWhatAShellWouldSplit(t *testing.T) {
	got := commandLine([]string{"requests", "-note", "BEFORE it's (polling)", "-runs", "3"})
	if want := `requests -note 'BEFORE it'\''s (polling)' -runs 3`; got != want {
		t.Errorf("commandLine = %s, want %s", got, want)
	}
}
