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
	"maps"
	"testing"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

func TestReleaseWritesTakeTheFirstAcceptedStatusWriteAfterTheFailure(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 21, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	status := func(user, verb, node string, code int, s float64) apiaudit.Request {
		return apiaudit.Request{User: user, Verb: verb, Resource: "nodes", Subresource: "status", Name: node, Code: code, Received: at(s)}
	}
	op := harness.OperatorUser
	reqs := []apiaudit.Request{
		status(op, "patch", "node-a", 200, 5),                    // before node-a failed
		status("system:node:node-a", "patch", "node-a", 200, 11), // the kubelet's
		status(op, "get", "node-a", 200, 12),
		{User: op, Verb: "patch", Resource: "nodes", Name: "node-a", Code: 200, Received: at(13)}, // a taint, not status
		status(op, "patch", "node-a", 409, 14),                                                    // lost its lock
		status(op, "patch", "node-a", 200, 15),                                                    // the release
		status(op, "patch", "node-a", 200, 16),
		status(op, "update", "node-b", 200, 21),
		status(op, "patch", "node-c", 200, 22), // node-c did not fail
	}
	got := releaseWrites(reqs, map[string]time.Time{"node-a": at(10), "node-b": at(20), "node-d": at(20)})
	want := map[string]time.Time{"node-a": at(15), "node-b": at(21)}
	if !maps.Equal(got, want) {
		t.Errorf("releaseWrites = %v, want %v", got, want)
	}
}
