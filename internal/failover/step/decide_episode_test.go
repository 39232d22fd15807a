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

package step

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

// failedAgain makes the node fail anew after the recorded episode: it was
// Ready in between, so its Ready condition has a newer transition.
func failedAgain(o *failover.State) {
	o.Node.Heartbeat.ReadySince = fixture.Now.Add(-20 * time.Second)
	o.Node.Heartbeat.KubeletPosted = fixture.Now.Add(-70 * time.Second)
	o.Node.Heartbeat.LeaseRenewed = fixture.Now.Add(-70 * time.Second)
}

func TestDecideFailureEpisodes(t *testing.T) {
	tests := []struct {
		name    string
		obs     func() failover.State
		mutate  func(o *failover.State)
		phase   s3gwv1alpha1.Phase
		record  bool // RecordEpisode with the current heartbeat
		restart bool // RestartEpisode with the current heartbeat
		// recovered: RecordEpisode is the recorded episode with the node's
		// Ready transition as its recovery
		recovered bool
		reason    string
		// kept: Succeeded=True is reported though the phase is not final
		kept bool
	}{
		{
			name:   "the first pass of a failure records it together with the targets",
			obs:    fixture.Fenced,
			mutate: func(o *failover.State) { o.Episode, o.Targets[0].Recorded = nil, false },
			phase:  s3gwv1alpha1.PhasePending, record: true,
			reason: s3gwv1alpha1.ReasonRemediationStarted,
		},
		{
			name:   "a failure with no s3gw pod is recorded too, so a later failure is new",
			obs:    fixture.Fenced,
			mutate: func(o *failover.State) { o.Episode, o.Targets = nil, nil },
			phase:  s3gwv1alpha1.PhaseSucceeded, record: true,
			reason: s3gwv1alpha1.ReasonNoWorkloadOnNode,
		},
		{
			name:   "nothing is recorded for a Ready node",
			obs:    fixture.Fenced,
			mutate: func(o *failover.State) { o.Episode, o.Node.Ready = nil, true },
			phase:  s3gwv1alpha1.PhaseWaitingForNodeFailure,
			reason: s3gwv1alpha1.ReasonNodeReady,
		},
		{
			name:    "a Succeeded remediation starts over when the node fails again, keeping Succeeded=True for NHC",
			obs:     fixture.Fenced,
			mutate:  func(o *failover.State) { o.Succeeded, o.SuccessReported = true, true; failedAgain(o) },
			phase:   s3gwv1alpha1.PhasePending,
			restart: true,
			reason:  s3gwv1alpha1.ReasonNodeFailedAgain,
			kept:    true,
		},
		{
			name:    "a remediation in any phase starts over when the node fails again",
			obs:     fixture.Fenced,
			mutate:  failedAgain,
			phase:   s3gwv1alpha1.PhasePending,
			restart: true,
			reason:  s3gwv1alpha1.ReasonNodeFailedAgain,
		},
		{
			name:   "Succeeded is kept while the node is Ready between failures, and the recovery is recorded",
			obs:    fixture.Fenced,
			mutate: func(o *failover.State) { o.Succeeded = true; failedAgain(o); o.Node.Ready = true },
			phase:  s3gwv1alpha1.PhaseSucceeded, recovered: true,
		},
		{
			name: "a recovery already recorded is not recorded again",
			obs:  fixture.Fenced,
			mutate: func(o *failover.State) {
				failedAgain(o)
				o.Node.Ready = true
				o.Episode.RecoveredAt, o.Episode.RecoveredReadySince = fixture.Now.Add(-time.Minute), o.Node.Heartbeat.ReadySince
			},
			phase:  s3gwv1alpha1.PhaseWaitingForNodeFailure,
			reason: s3gwv1alpha1.ReasonNodeReady,
		},
		{
			name:   "Succeeded is kept within the same failure",
			obs:    fixture.Fenced,
			mutate: func(o *failover.State) { o.Succeeded = true },
			phase:  s3gwv1alpha1.PhaseSucceeded,
		},
		{
			name:   "a timed-out remediation does not start over",
			obs:    fixture.Fenced,
			mutate: func(o *failover.State) { o.TimedOut = true; failedAgain(o) },
			phase:  s3gwv1alpha1.PhaseStopped,
			reason: s3gwv1alpha1.ReasonRemediationStoppedByNHC,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := tt.obs()
			tt.mutate(&o)

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(tt.phase))
			current := o.Node.Heartbeat.Episode()
			switch {
			case tt.record:
				g.Expect(d.RecordEpisode).To(Equal(&current))
			case tt.recovered:
				recovered := *o.Episode
				recovered.RecoveredAt, recovered.RecoveredReadySince = o.Now, o.Node.Heartbeat.ReadySince
				g.Expect(d.RecordEpisode).To(Equal(&recovered))
			default:
				g.Expect(d.RecordEpisode).To(BeNil())
			}
			if tt.restart {
				g.Expect(d.RestartEpisode).To(Equal(&current))
				g.Expect(d.Destructive()).To(BeFalse(), "a restart only writes status")
				g.Expect(d.Wait).To(Equal(WaitForRecord))
			} else {
				g.Expect(d.RestartEpisode).To(BeNil())
			}
			switch {
			case tt.kept:
				expectConditions(g, Conditions(o, d), cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain},
					cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, tt.reason})
			case tt.reason != "":
				expectConditions(g, Conditions(o, d), cond{s3gwv1alpha1.ConditionSucceeded, succeededStatus(tt.phase), tt.reason})
			}
		})
	}
}

func succeededStatus(p s3gwv1alpha1.Phase) metav1.ConditionStatus {
	switch p {
	case s3gwv1alpha1.PhaseSucceeded:
		return metav1.ConditionTrue
	case s3gwv1alpha1.PhaseStopped, s3gwv1alpha1.PhaseFailed:
		return metav1.ConditionFalse
	default:
		return metav1.ConditionUnknown
	}
}

func TestDecideStaleDelegate(t *testing.T) {
	before := fixture.FailedAt.Add(-time.Hour)
	// What the controller saw, on its own clock: the delegate proven or
	// failed an hour before the failure, the node Ready a minute after or
	// before that, the kubelet alive at testFailedAt (notFenced).
	afterFence, beforeFence := before.Add(time.Minute), before.Add(-time.Minute)
	seen := func(s failover.EvidenceSighting) []failover.EvidenceSighting {
		s.Name = fixture.DelegateKind + "/" + fixture.NodeName
		return []failover.EvidenceSighting{s}
	}
	tests := []struct {
		name      string
		delegate  *failover.RemediatorCR
		sightings []failover.EvidenceSighting
		// recovered is when a step first saw the node Ready again; nil if never
		recovered *time.Time
		// witnessedAt is when the controller saw the kubelet's heartbeat change; nil if never
		witnessedAt    *time.Time
		create, delete bool
		// failed is true when the delegate's failure ends the remediation
		failed bool
	}{
		{name: "not created yet: create it", create: true},
		{name: "still fencing: wait", delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName}},
		{name: "seen fenced, the node seen Ready again since: delete it so a new one fences this failure",
			recovered: &afterFence, delete: true, sightings: seen(failover.EvidenceSighting{ProvenAt: &before}),
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true}},
		{name: "seen fenced, the node seen Ready in the same pass: the fence was done, delete it",
			recovered: &before, delete: true, sightings: seen(failover.EvidenceSighting{ProvenAt: &before}),
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true}},
		{name: "seen fenced, the kubelet seen alive since but the node not Ready (coming back from that fence): kept, no second fence",
			witnessedAt: &fixture.FailedAt, sightings: seen(failover.EvidenceSighting{ProvenAt: &before}),
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true}},
		{name: "seen fenced, the node seen Ready only before that fence: kept, no second fence",
			recovered: &beforeFence, sightings: seen(failover.EvidenceSighting{ProvenAt: &before}),
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true}},
		{name: "fenced, never seen proving (no sighting): kept (it cannot be proven stale) and not counted",
			recovered: &afterFence, delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true}},
		{name: "seen failed before the controller saw the kubelet alive: delete it so a new one fences this failure",
			witnessedAt: &fixture.FailedAt, delete: true, sightings: seen(failover.EvidenceSighting{FailedAt: &before}),
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Failure: "AgentFailed"}},
		{name: "seen failed in the pass that saw the kubelet's last change: this failure's, it ends the remediation",
			witnessedAt: &before, failed: true, sightings: seen(failover.EvidenceSighting{FailedAt: &before}),
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Failure: "AgentFailed"}},
		{name: "seen failed, the kubelet never seen alive since: this failure's, it ends the remediation",
			failed: true, sightings: seen(failover.EvidenceSighting{FailedAt: &before}),
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Failure: "AgentFailed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.NotFenced()
			fixture.WithoutDefaultSources(&o)
			fixture.WithDelegate(&o)
			o.Evidence.Delegate = tt.delegate
			o.Sightings = tt.sightings
			if tt.recovered != nil {
				o.Episode.RecoveredAt = *tt.recovered
			}
			if tt.witnessedAt != nil {
				o.Node.Heartbeat.Seen.At, o.Node.Heartbeat.Seen.Witnessed = *tt.witnessedAt, true
			}

			d := Decide(o)

			if tt.failed {
				g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseFailed))
				g.Expect(d.Reason).To(Equal(s3gwv1alpha1.ReasonDelegateFailed))
			} else {
				g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
			}
			g.Expect(d.Does(failover.CreateFencer)).To(Equal(tt.create))
			g.Expect(d.Does(failover.DeleteFencer)).To(Equal(tt.delete))
			g.Expect(d.Destructive()).To(BeFalse())
		})
	}
	t.Run("a CR of the delegate's kind someone else created for this failure is reused, not duplicated", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.NotFenced()
		fixture.WithoutDefaultSources(&o)
		fixture.WithDelegate(&o)
		o.Evidence.DelegateError = "a FenceAgentsRemediation named worker-1 exists and is not owned by this remediation"
		o.Evidence.OtherFencers = []failover.RemediatorCR{{Kind: fixture.DelegateKind, Name: "far/worker-1", CreatedAt: fixture.FencedAt.Add(-time.Second)}}

		d := Decide(o)
		g.Expect(d.Does(failover.CreateFencer)).To(BeFalse(), "it fences this failure already")
		g.Expect(d.Gate.Missing).To(ContainSubstring("reused FenceAgentsRemediation/far/worker-1 has no FenceAgentActionSucceeded=True"))
		expectConditions(g, Conditions(o, d), cond{s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForFencing})

		o.Evidence.OtherFencers[0].Fenced = true
		d = Decide(o)
		g.Expect(d.Gate.Evidence).To(ConsistOf("reused FenceAgentsRemediation/far/worker-1"))
		g.Expect(evictedBy(d)).NotTo(BeEmpty())
	})
	t.Run("a CR of the delegate's kind from an earlier failure is not reused", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.NotFenced()
		fixture.WithoutDefaultSources(&o)
		fixture.WithDelegate(&o)
		o.Evidence.OtherFencers = []failover.RemediatorCR{{Kind: fixture.DelegateKind, Name: "far/worker-1", Fenced: true,
			CreatedAt: before}}

		d := Decide(o)
		g.Expect(d.Does(failover.CreateFencer)).To(BeTrue())
		g.Expect(d.Destructive()).To(BeFalse())
	})
	t.Run("NHC's time-out is passed on to the delegate", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.NotFenced()
		fixture.WithDelegate(&o)
		o.TimedOut = true
		g.Expect(Decide(o).Does(failover.TimeOutFencer)).To(BeTrue())
		withoutDelegate := fixture.NotFenced()
		withoutDelegate.TimedOut = true
		g.Expect(Decide(withoutDelegate).Does(failover.TimeOutFencer)).To(BeFalse())
	})
	t.Run("a fresh success opens the gate and is not deleted", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.NotFenced()
		fixture.WithoutDefaultSources(&o)
		fixture.WithDelegate(&o)
		o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}

		d := Decide(o)

		g.Expect(d.Does(failover.DeleteFencer)).To(BeFalse())
		g.Expect(evictedBy(d)).NotTo(BeEmpty())
	})
}
