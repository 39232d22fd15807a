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
	"strings"
	"testing"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

func TestScaleTableHasAColumnPerPodCount(t *testing.T) {
	run := func(pods int, peak int64) scaleRun {
		return scaleRun{Pods: pods, Replaced: 20, Succeeded: 20, CRToReady: newStats([]float64{3, 4, 4.5}),
			After: cluster.Usage{PeakRSS: peak, CPU: 12 * time.Second}, Before: cluster.Usage{CPU: 2 * time.Second},
			Requests: apiaudit.Count{Total: 1000}, Idle: apiaudit.Count{Total: 3}, IdleWindow: 30 * time.Second, FailureSpan: time.Minute}
	}
	r := &scaleResult{Fail: 20, Runs: []scaleRun{run(1100, 40<<20), run(2200, 41<<20)}}
	table := r.table()
	for _, want := range []string{
		"| | 1100 pods | 2200 pods | Goal |",
		"| gateways replaced | 20/20 | 20/20 | all 20 |",
		"| CR → Ready p99 | 4.5 s | 4.5 s | ≤ 5 s |",
		"| manager peak RSS (VmHWM) | 40.0 MiB | 41.0 MiB | ≤ 64 MiB, flat |",
		"| manager CPU, failures → all Succeeded | 10.0 s | 10.0 s |  |",
		"| API requests, failures → all Succeeded | 1000 (50 per remediation, 1m0s) |",
		"| API requests idle, per 10 s | 1.0 | 1.0 |  |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestRequestsPer10s(t *testing.T) {
	if got := per10s(195, 30*time.Second); got != 65 {
		t.Errorf("per10s(195, 30s) = %v, want 65", got)
	}
	r := &requestsResult{WaitWindow: time.Minute, Waiting: apiaudit.Count{Total: 6},
		Happy: []happyRun{{Node: "happy-0", CRToSucceeded: apiaudit.Count{Total: 42}, Took: 3 * time.Second}}}
	md := r.markdown()
	for _, want := range []string{"| happy-0: CR created → `Succeeded` (3s) | **42** | ≤ 60 |", "| waiting for fencing, per 10 s (6 in 1m0s) | **1.0** | ≤ 1 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
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
