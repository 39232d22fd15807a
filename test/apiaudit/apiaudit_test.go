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

package apiaudit

import (
	"strings"
	"testing"
	"time"
)

// auditLog is what kube-apiserver writes with --audit-log-format=json: one
// Event per line; a watch appears at ResponseStarted and ResponseComplete.
const auditLog = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/pods?limit=500","verb":"list","user":{"username":"s3gw-remediation-manager","groups":["system:masters","system:authenticated"]},"sourceIPs":["127.0.0.1"],"userAgent":"manager/v0.0.0","objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-12-01T10:00:01.000000Z","stageTimestamp":"2026-12-01T10:00:01.010000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/api/v1/nodes/n1/status","verb":"patch","user":{"username":"local-cluster-admin"},"userAgent":"kwok","objectRef":{"resource":"nodes","name":"n1","apiVersion":"v1","subresource":"status"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-12-01T10:00:02.000000Z","stageTimestamp":"2026-12-01T10:00:02.001000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseStarted","requestURI":"/apis/longhorn.io/v1beta2/volumes?watch=true","verb":"watch","user":{"username":"s3gw-remediation-manager"},"userAgent":"manager/v0.0.0","objectRef":{"resource":"volumes","namespace":"longhorn-system","apiGroup":"longhorn.io","apiVersion":"v1beta2"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-12-01T10:00:00.500000Z","stageTimestamp":"2026-12-01T10:00:00.501000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a4","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/s3gw/pods/gw","verb":"delete","user":{"username":"s3gw-remediation-manager"},"userAgent":"manager/v0.0.0","objectRef":{"resource":"pods","namespace":"s3gw","name":"gw","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-12-01T10:00:03.000000Z","stageTimestamp":"2026-12-01T10:00:03.002000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseComplete","requestURI":"/apis/longhorn.io/v1beta2/volumes?watch=true","verb":"watch","user":{"username":"s3gw-remediation-manager"},"userAgent":"manager/v0.0.0","objectRef":{"resource":"volumes","namespace":"longhorn-system","apiGroup":"longhorn.io","apiVersion":"v1beta2"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-12-01T10:00:00.500000Z","stageTimestamp":"2026-12-01T10:05:00.000000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a5","stage":"Respon`

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, "2026-12-01T10:00:"+s+"Z")
	if err != nil {
		panic(err)
	}
	return t
}

func TestReadCountsEachRequestOnceInArrivalOrder(t *testing.T) {
	reqs, err := parse(strings.NewReader(auditLog), ByUser("s3gw-remediation-manager"))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(reqs))
	for _, r := range reqs {
		got = append(got, r.Verb+" "+r.Target())
	}
	want := []string{"watch longhorn.io/volumes", "list pods", "delete pods"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("requests = %v, want %v (the watch once, at its start; kwok's patch and the torn last line left out)", got, want)
	}
	if d := reqs[2]; d.Namespace != "s3gw" || d.Name != "gw" || d.Code != 200 || !d.Received.Equal(at("03")) {
		t.Errorf("delete = %+v, want pod s3gw/gw, code 200, received at :03", d)
	}
}

func TestBetweenAndTally(t *testing.T) {
	reqs, err := parse(strings.NewReader(auditLog), nil)
	if err != nil {
		t.Fatal(err)
	}
	window := Between(reqs, at("01"), at("03"))
	c := Tally(window)
	if c.Total != 2 || c.ByKind["list pods"] != 1 || c.ByKind["patch nodes/status"] != 1 {
		t.Errorf("Tally(requests in [:01, :03)) = %+v, want one list pods and one patch nodes/status", c)
	}
	if got, want := Tally(reqs).String(), "4 (1 delete pods, 1 list pods, 1 patch nodes/status, 1 watch longhorn.io/volumes)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
