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

package evidence

import (
	"testing"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"

	. "github.com/onsi/gomega"
)

func TestNextSightings(t *testing.T) {
	earlier := fixture.Now.Add(-time.Minute)
	far := func(fenced bool) failover.RemediatorCR {
		return failover.RemediatorCR{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: fenced}
	}
	farName := fixture.FARKind + "/" + fixture.NodeName
	tests := []struct {
		name   string
		kept   []failover.EvidenceSighting
		mutate func(o *failover.State)
		want   []failover.EvidenceSighting
	}{
		{
			name: "first pass: no taint and a FAR still fencing are seen pending now",
			mutate: func(o *failover.State) {
				o.Evidence.Remediators = []failover.RemediatorCR{far(false)}
			},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &fixture.Now}, {Name: farName, PendingAt: &fixture.Now}},
		},
		{
			name: "a FAR seen pending, now fenced: the pending sighting stays, proven now",
			kept: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &earlier}, {Name: farName, PendingAt: &earlier}},
			mutate: func(o *failover.State) {
				o.Evidence.Remediators = []failover.RemediatorCR{far(true)}
			},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &earlier}, {Name: farName, PendingAt: &earlier, ProvenAt: &fixture.Now}},
		},
		{
			name: "still pending, already seen pending since the heartbeat sighting: kept as it is",
			kept: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &earlier}},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &earlier}},
		},
		{
			name: "still pending, seen pending only before the heartbeat sighting: seen again now",
			kept: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: fixture.PtrTime(fixture.FailedAt.Add(-time.Second))}},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &fixture.Now}},
		},
		{
			name: "fenced when first seen: proven now, never seen pending",
			mutate: func(o *failover.State) {
				o.Evidence.Delegate = ptrCR(far(true))
			},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &fixture.Now}, {Name: farName, ProvenAt: &fixture.Now}},
		},
		{
			name: "proof already seen keeps its first moment",
			kept: []failover.EvidenceSighting{{Name: farName, PendingAt: &earlier, ProvenAt: &earlier}},
			mutate: func(o *failover.State) {
				o.Evidence.Remediators = []failover.RemediatorCR{far(true)}
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
			},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, ProvenAt: &fixture.Now}, {Name: farName, PendingAt: &earlier, ProvenAt: &earlier}},
		},
		{
			name: "our own taint proves nothing: the node counts as untainted",
			kept: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &earlier, ProvenAt: &earlier}},
			mutate: func(o *failover.State) {
				o.Node.OutOfServiceTaint = fixture.OurTaint()
			},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &earlier}},
		},
		{
			name: "a CR seen failed: when first seen so is kept; no longer failed, it is forgotten",
			kept: []failover.EvidenceSighting{{Name: farName, PendingAt: &earlier, FailedAt: &earlier}},
			mutate: func(o *failover.State) {
				gaveUp := far(false)
				gaveUp.Failure = "AgentFailed"
				o.Evidence.Remediators = []failover.RemediatorCR{gaveUp, {Kind: fixture.FARKind, Name: "other", Failure: "AgentFailed"}}
				o.Evidence.Delegate = ptrCR(far(false))
			},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &fixture.Now}, {Name: farName, PendingAt: &earlier, FailedAt: &earlier},
				{Name: fixture.FARKind + "/other", PendingAt: &fixture.Now, FailedAt: &fixture.Now}},
		},
		{
			name: "a CR gone from the API is forgotten; one CR listed twice is seen once",
			kept: []failover.EvidenceSighting{{Name: fixture.FARKind + "/gone", PendingAt: &earlier}},
			mutate: func(o *failover.State) {
				o.Evidence.Remediators = []failover.RemediatorCR{far(false)}
				o.Evidence.Delegate = ptrCR(far(false))
			},
			want: []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &fixture.Now}, {Name: farName, PendingAt: &fixture.Now}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fixture.NotFenced()
			if tt.mutate != nil {
				tt.mutate(&o)
			}
			NewWithT(t).Expect(NextSightings(tt.kept, o)).To(Equal(tt.want))
		})
	}
}

func ptrCR(cr failover.RemediatorCR) *failover.RemediatorCR { return &cr }

// TestSawCreated pins the sighting of a delegate the controller created:
// pending at the step that created it, so its success counts for this
// failure whatever kube-apiserver's creationTimestamp says.
func TestSawCreated(t *testing.T) {
	g := NewWithT(t)
	delegate := failover.RemediatorCR{Kind: fixture.DelegateKind, Name: "fencing/" + fixture.NodeName + "-x7k2p"}
	created := fixture.FailedAt.Add(2 * time.Minute)
	sightings := SawCreated(fixture.SawUntainted(), delegate, created)
	g.Expect(sightings).To(ContainElement(failover.EvidenceSighting{Name: fixture.DelegateKind + "/fencing/" + fixture.NodeName + "-x7k2p", PendingAt: &created}))
	g.Expect(fixture.SawUntainted()).To(HaveLen(1), "the kept sightings are not changed in place")
	g.Expect(SawCreated(sightings, delegate, fixture.Now)).To(Equal(sightings), "a CR already seen keeps its sighting")

	o := fixture.NotFenced()
	fixture.WithoutDefaultSources(&o)
	fixture.WithDelegate(&o)
	// Created before kube-controller-manager marked the node Unknown, by
	// the API server's clock: only the controller's own sighting ties it.
	delegate.Fenced, delegate.CreatedAt = true, o.Node.Heartbeat.ReadySince.Add(-time.Second)
	o.Evidence.Delegate = &delegate
	g.Expect(Evaluate(o).Open).To(BeFalse())
	o.Sightings = NextSightings(sightings, o)
	g.Expect(Evaluate(o).Evidence).To(ConsistOf("delegate " + fixture.DelegateKind + "/fencing/" + fixture.NodeName + "-x7k2p"))
}
