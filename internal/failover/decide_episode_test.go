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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// failedAgain makes the node fail anew after the recorded episode: it was
// Ready in between, so its Ready condition has a newer transition.
func failedAgain(o *Observation) {
	o.Node.Heartbeat.ReadySince = testNow.Add(-20 * time.Second)
	o.Node.Heartbeat.KubeletPosted = testNow.Add(-70 * time.Second)
	o.Node.Heartbeat.LeaseRenewed = testNow.Add(-70 * time.Second)
}

func TestDecideFailureEpisodes(t *testing.T) {
	tests := []struct {
		name    string
		obs     func() Observation
		mutate  func(o *Observation)
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
			obs:    fenced,
			mutate: func(o *Observation) { o.Episode, o.Targets[0].Recorded = nil, false },
			phase:  s3gwv1alpha1.PhasePending, record: true,
			reason: s3gwv1alpha1.ReasonRemediationStarted,
		},
		{
			name:   "a failure with no s3gw pod is recorded too, so a later failure is new",
			obs:    fenced,
			mutate: func(o *Observation) { o.Episode, o.Targets = nil, nil },
			phase:  s3gwv1alpha1.PhaseSucceeded, record: true,
			reason: s3gwv1alpha1.ReasonNoWorkloadOnNode,
		},
		{
			name:   "nothing is recorded for a Ready node",
			obs:    fenced,
			mutate: func(o *Observation) { o.Episode, o.Node.Ready = nil, true },
			phase:  s3gwv1alpha1.PhaseWaitingForNodeFailure,
			reason: s3gwv1alpha1.ReasonNodeReady,
		},
		{
			name:    "a Succeeded remediation starts over when the node fails again, keeping Succeeded=True for NHC",
			obs:     fenced,
			mutate:  func(o *Observation) { o.Succeeded, o.SuccessReported = true, true; failedAgain(o) },
			phase:   s3gwv1alpha1.PhasePending,
			restart: true,
			reason:  s3gwv1alpha1.ReasonNodeFailedAgain,
			kept:    true,
		},
		{
			name:    "a remediation in any phase starts over when the node fails again",
			obs:     fenced,
			mutate:  failedAgain,
			phase:   s3gwv1alpha1.PhasePending,
			restart: true,
			reason:  s3gwv1alpha1.ReasonNodeFailedAgain,
		},
		{
			name:   "Succeeded is kept while the node is Ready between failures, and the recovery is recorded",
			obs:    fenced,
			mutate: func(o *Observation) { o.Succeeded = true; failedAgain(o); o.Node.Ready = true },
			phase:  s3gwv1alpha1.PhaseSucceeded, recovered: true,
		},
		{
			name: "a recovery already recorded is not recorded again",
			obs:  fenced,
			mutate: func(o *Observation) {
				failedAgain(o)
				o.Node.Ready, o.Episode.RecoveredAt = true, o.Node.Heartbeat.ReadySince
			},
			phase:  s3gwv1alpha1.PhaseWaitingForNodeFailure,
			reason: s3gwv1alpha1.ReasonNodeReady,
		},
		{
			name:   "Succeeded is kept within the same failure",
			obs:    fenced,
			mutate: func(o *Observation) { o.Succeeded = true },
			phase:  s3gwv1alpha1.PhaseSucceeded,
		},
		{
			name:   "a timed-out remediation does not start over",
			obs:    fenced,
			mutate: func(o *Observation) { o.TimedOut = true; failedAgain(o) },
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
				recovered.RecoveredAt = o.Node.Heartbeat.ReadySince
				g.Expect(d.RecordEpisode).To(Equal(&recovered))
			default:
				g.Expect(d.RecordEpisode).To(BeNil())
			}
			if tt.restart {
				g.Expect(d.RestartEpisode).To(Equal(&current))
				g.Expect(d.Destructive()).To(BeFalse(), "a restart only writes status")
				g.Expect(d.Wait).To(Equal(WaitForStatus))
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
	before := testFailedAt.Add(-time.Hour)
	afterFence, beforeFence := before.Add(time.Minute), before.Add(-time.Minute)
	tests := []struct {
		name     string
		delegate *RemediatorCR
		// recovered is when a pass last saw the node Ready again; nil if never
		recovered      *time.Time
		create, delete bool
	}{
		{name: "not created yet: create it", create: true},
		{name: "still fencing: wait", delegate: &RemediatorCR{Kind: delegated, Name: testNode}},
		{name: "fenced an earlier incident, the node Ready again since: delete it so a new one fences this failure",
			recovered: &afterFence, delete: true,
			delegate: &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, FencedAt: &before}},
		{name: "fenced, the node not seen Ready since (still coming back from that fence): kept, no second fence",
			delegate: &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, FencedAt: &before}},
		{name: "fenced, the node seen Ready only before that fence: kept, no second fence",
			recovered: &beforeFence,
			delegate:  &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, FencedAt: &before}},
		{name: "succeeded without a timestamp: kept (it cannot be proven stale) and not counted",
			delegate: &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := notFenced()
			withoutDefaultSources(&o)
			withDelegate(&o)
			o.Evidence.Delegate = tt.delegate
			if tt.recovered != nil {
				o.Episode.RecoveredAt = *tt.recovered
			}

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
			g.Expect(d.CreateDelegate).To(Equal(tt.create))
			g.Expect(d.DeleteDelegate).To(Equal(tt.delete))
			g.Expect(d.Destructive()).To(BeFalse())
		})
	}
	t.Run("a CR of the delegate's kind someone else created for this failure is reused, not duplicated", func(t *testing.T) {
		g := NewWithT(t)
		o := notFenced()
		withoutDefaultSources(&o)
		withDelegate(&o)
		o.Evidence.DelegateError = "a FenceAgentsRemediation named worker-1 exists and is not owned by this remediation"
		o.Evidence.OtherFencers = []RemediatorCR{{Kind: delegated, Name: "far/worker-1", CreatedAt: testFencedAt.Add(-time.Second)}}

		d := Decide(o)
		g.Expect(d.CreateDelegate).To(BeFalse(), "it fences this failure already")
		g.Expect(d.Gate.Missing).To(ContainSubstring("reused FenceAgentsRemediation/far/worker-1 has no FenceAgentActionSucceeded=True"))
		expectConditions(g, Conditions(o, d), cond{s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForFencing})

		o.Evidence.OtherFencers[0].Fenced, o.Evidence.OtherFencers[0].FencedAt = true, ptr.To(testFencedAt)
		d = Decide(o)
		g.Expect(d.Gate.Evidence).To(ConsistOf("reused FenceAgentsRemediation/far/worker-1"))
		g.Expect(d.Evict).NotTo(BeEmpty())
	})
	t.Run("a CR of the delegate's kind from an earlier failure is not reused", func(t *testing.T) {
		g := NewWithT(t)
		o := notFenced()
		withoutDefaultSources(&o)
		withDelegate(&o)
		o.Evidence.OtherFencers = []RemediatorCR{{Kind: delegated, Name: "far/worker-1", Fenced: true,
			FencedAt: ptr.To(before), CreatedAt: before}}

		d := Decide(o)
		g.Expect(d.CreateDelegate).To(BeTrue())
		g.Expect(d.Destructive()).To(BeFalse())
	})
	t.Run("NHC's time-out is passed on to the delegate", func(t *testing.T) {
		g := NewWithT(t)
		o := notFenced()
		withDelegate(&o)
		o.TimedOut = true
		g.Expect(Decide(o).TimeOutDelegate).To(BeTrue())
		withoutDelegate := notFenced()
		withoutDelegate.TimedOut = true
		g.Expect(Decide(withoutDelegate).TimeOutDelegate).To(BeFalse())
	})
	t.Run("a fresh success opens the gate and is not deleted", func(t *testing.T) {
		g := NewWithT(t)
		o := notFenced()
		withoutDefaultSources(&o)
		withDelegate(&o)
		o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, FencedAt: ptr.To(testFencedAt)}

		d := Decide(o)

		g.Expect(d.DeleteDelegate).To(BeFalse())
		g.Expect(d.Evict).NotTo(BeEmpty())
	})
}
