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
	"testing"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

func TestOperatorWritesTakeTheFirstAcceptedWriteOfEachKindAfterTheFailure(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 21, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	op := harness.OperatorUser
	status := func(user, verb, node string, code int, s float64) apiaudit.Request {
		return apiaudit.Request{User: user, Verb: verb, Resource: "nodes", Subresource: "status", Name: node, Code: code, Received: at(s)}
	}
	ticket := func(volume string, code int, s float64) apiaudit.Request {
		return apiaudit.Request{User: op, Verb: "patch", APIGroup: "longhorn.io", Resource: "volumeattachments",
			Namespace: "longhorn-system", Name: volume, Code: code, Received: at(s)}
	}
	podDelete := func(ns, pod string, code int, s float64) apiaudit.Request {
		return apiaudit.Request{User: op, Verb: "delete", Resource: "pods", Namespace: ns, Name: pod, Code: code, Received: at(s)}
	}
	taint := apiaudit.Request{User: op, Verb: "patch", Resource: "nodes", Name: "node-a", Code: 200, Received: at(13)}
	reqs := []apiaudit.Request{
		status(op, "patch", "node-a", 200, 5), // before node-a failed
		ticket("pvc-a", 200, 9),               // before node-a failed
		ticket("pvc-a", 409, 11),              // lost its lock
		ticket("pvc-a", 200, 11.5),            // the ticket's removal
		{User: op, Verb: "patch", APIGroup: "longhorn.io", Resource: "volumeattachments", Subresource: "status",
			Name: "pvc-a", Code: 200, Received: at(11.6)}, // not the operator's to write, and not the ticket
		{User: "local-cluster-admin", Verb: "delete", Resource: "pods", Namespace: "ns-a", Name: "gw-a", Code: 200,
			Received: at(11.8)}, // someone else's
		status("system:node:node-a", "patch", "node-a", 200, 11), // the kubelet's
		status(op, "get", "node-a", 200, 12),
		podDelete("ns-b", "gw-a", 200, 12.2), // another namespace's pod of that name
		podDelete("ns-a", "gw-a", 200, 12.5), // the force delete
		podDelete("ns-a", "gw-a", 404, 12.6),
		taint,                                  // not the status
		status(op, "patch", "node-a", 409, 14), // lost its lock
		status(op, "patch", "node-a", 200, 15), // the release
		status(op, "patch", "node-a", 200, 16),
		podDelete("ns-b", "gw-b", 404, 20.5), // already gone: the pod's delete is not found
		status(op, "update", "node-b", 200, 21),
		status(op, "patch", "node-c", 200, 22), // node-c did not fail
	}
	failures := []failedGateway{
		{Node: "node-a", PodNamespace: "ns-a", Pod: "gw-a", Volume: "pvc-a", FailedAt: at(10)},
		{Node: "node-b", PodNamespace: "ns-b", Pod: "gw-b", Volume: "pvc-b", FailedAt: at(20)},
		{Node: "node-d", PodNamespace: "ns-d", Pod: "gw-d", Volume: "pvc-d", FailedAt: at(20)},
	}
	got := operatorWrites(reqs, failures)
	want := map[string]writeTimes{
		"node-a": {ticketRemoval: at(11.5), forceDelete: at(12.5), releaseWrite: at(15)},
		"node-b": {releaseWrite: at(21)},
		"node-d": {},
	}
	for node, w := range want {
		if got[node] != w {
			t.Errorf("%s: operatorWrites = %v, want %v", node, got[node], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("operatorWrites found writes for %d failures, want %d: %v", len(got), len(want), got)
	}
}

func TestOnTimelineTakesTheWallClockStepOut(t *testing.T) {
	failedAt := time.Date(2026, 12, 4, 1, 45, 54, 0, time.UTC)
	wrote := failedAt.Add(81 * time.Second) // the audit log's wall-clock time
	for _, tc := range []struct {
		step, want time.Duration
	}{
		{0, 81 * time.Second},
		// The wall clock was set 0.37 s ahead after the node was lost: the
		// write came 0.37 s sooner than the wall clocks say.
		{370 * time.Millisecond, 81*time.Second - 370*time.Millisecond},
		{-time.Second, 82 * time.Second},
	} {
		if got := onTimeline(wrote, failedAt, tc.step); got != tc.want {
			t.Errorf("onTimeline(step %v) = %v, want %v", tc.step, got, tc.want)
		}
	}
}
