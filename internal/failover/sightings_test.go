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

package failover

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestNextSightings(t *testing.T) {
	earlier := testNow.Add(-time.Minute)
	far := func(fenced bool) RemediatorCR { return RemediatorCR{Kind: farKind, Name: testNode, Fenced: fenced} }
	farName := farKind + "/" + testNode
	tests := []struct {
		name   string
		kept   []EvidenceSighting
		mutate func(o *Observation)
		want   []EvidenceSighting
	}{
		{
			name: "first pass: no taint and a FAR still fencing are seen pending now",
			mutate: func(o *Observation) {
				o.Evidence.Remediators = []RemediatorCR{far(false)}
			},
			want: []EvidenceSighting{{Name: TaintSighting, PendingAt: &testNow}, {Name: farName, PendingAt: &testNow}},
		},
		{
			name: "a FAR seen pending, now fenced: the pending sighting stays, proven now",
			kept: []EvidenceSighting{{Name: TaintSighting, PendingAt: &earlier}, {Name: farName, PendingAt: &earlier}},
			mutate: func(o *Observation) {
				o.Evidence.Remediators = []RemediatorCR{far(true)}
			},
			want: []EvidenceSighting{{Name: TaintSighting, PendingAt: &earlier}, {Name: farName, PendingAt: &earlier, ProvenAt: &testNow}},
		},
		{
			name: "still pending, already seen pending since the heartbeat sighting: kept as it is",
			kept: []EvidenceSighting{{Name: TaintSighting, PendingAt: &earlier}},
			want: []EvidenceSighting{{Name: TaintSighting, PendingAt: &earlier}},
		},
		{
			name: "still pending, seen pending only before the heartbeat sighting: seen again now",
			kept: []EvidenceSighting{{Name: TaintSighting, PendingAt: ptrTime(testFailedAt.Add(-time.Second))}},
			want: []EvidenceSighting{{Name: TaintSighting, PendingAt: &testNow}},
		},
		{
			name: "fenced when first seen: proven now, never seen pending",
			mutate: func(o *Observation) {
				o.Evidence.Delegate = ptrCR(far(true))
			},
			want: []EvidenceSighting{{Name: TaintSighting, PendingAt: &testNow}, {Name: farName, ProvenAt: &testNow}},
		},
		{
			name: "proof already seen keeps its first moment",
			kept: []EvidenceSighting{{Name: farName, PendingAt: &earlier, ProvenAt: &earlier}},
			mutate: func(o *Observation) {
				o.Evidence.Remediators = []RemediatorCR{far(true)}
				o.Node.OutOfServiceTaint = freshTaint()
			},
			want: []EvidenceSighting{{Name: TaintSighting, ProvenAt: &testNow}, {Name: farName, PendingAt: &earlier, ProvenAt: &earlier}},
		},
		{
			name: "our own taint proves nothing: the node counts as untainted",
			kept: []EvidenceSighting{{Name: TaintSighting, PendingAt: &earlier, ProvenAt: &earlier}},
			mutate: func(o *Observation) {
				o.Node.OutOfServiceTaint = ourTaint()
			},
			want: []EvidenceSighting{{Name: TaintSighting, PendingAt: &earlier}},
		},
		{
			name: "a CR seen failed: when first seen so is kept; no longer failed, it is forgotten",
			kept: []EvidenceSighting{{Name: farName, PendingAt: &earlier, FailedAt: &earlier}},
			mutate: func(o *Observation) {
				gaveUp := far(false)
				gaveUp.Failure = "AgentFailed"
				o.Evidence.Remediators = []RemediatorCR{gaveUp, {Kind: farKind, Name: "other", Failure: "AgentFailed"}}
				o.Evidence.Delegate = ptrCR(far(false))
			},
			want: []EvidenceSighting{{Name: TaintSighting, PendingAt: &testNow}, {Name: farName, PendingAt: &earlier, FailedAt: &earlier},
				{Name: farKind + "/other", PendingAt: &testNow, FailedAt: &testNow}},
		},
		{
			name: "a CR gone from the API is forgotten; one CR listed twice is seen once",
			kept: []EvidenceSighting{{Name: farKind + "/gone", PendingAt: &earlier}},
			mutate: func(o *Observation) {
				o.Evidence.Remediators = []RemediatorCR{far(false)}
				o.Evidence.Delegate = ptrCR(far(false))
			},
			want: []EvidenceSighting{{Name: TaintSighting, PendingAt: &testNow}, {Name: farName, PendingAt: &testNow}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := notFenced()
			if tt.mutate != nil {
				tt.mutate(&o)
			}
			NewWithT(t).Expect(NextSightings(tt.kept, o)).To(Equal(tt.want))
		})
	}
}

func ptrCR(cr RemediatorCR) *RemediatorCR { return &cr }

// TestSawCreated pins the sighting of a delegate the controller created:
// pending at the pass that created it, so its success counts for this
// failure whatever kube-apiserver's creationTimestamp says.
func TestSawCreated(t *testing.T) {
	g := NewWithT(t)
	delegate := RemediatorCR{Kind: delegated, Name: "fencing/" + testNode + "-x7k2p"}
	created := testFailedAt.Add(2 * time.Minute)
	sightings := SawCreated(sawUntainted(), delegate, created)
	g.Expect(sightings).To(ContainElement(EvidenceSighting{Name: delegated + "/fencing/" + testNode + "-x7k2p", PendingAt: &created}))
	g.Expect(sawUntainted()).To(HaveLen(1), "the kept sightings are not changed in place")
	g.Expect(SawCreated(sightings, delegate, testNow)).To(Equal(sightings), "a CR already seen keeps its sighting")

	o := notFenced()
	withoutDefaultSources(&o)
	withDelegate(&o)
	// Created before kube-controller-manager marked the node Unknown, by
	// the API server's clock: only the controller's own sighting ties it.
	delegate.Fenced, delegate.CreatedAt = true, o.Node.Heartbeat.ReadySince.Add(-time.Second)
	o.Evidence.Delegate = &delegate
	g.Expect(EvaluateGate(o).Open).To(BeFalse())
	o.Sightings = NextSightings(sightings, o)
	g.Expect(EvaluateGate(o).Evidence).To(ConsistOf("delegate " + delegated + "/fencing/" + testNode + "-x7k2p"))
}
