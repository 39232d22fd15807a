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

// TestDecideTimedOutDelegate pins NHC's rule for its time-out: never on a
// CR that reports Succeeded=True.
func TestDecideTimedOutDelegate(t *testing.T) {
	tests := []struct {
		name     string
		spec     bool // spec.fencing.delegate set
		delegate *RemediatorCR
		want     bool
	}{
		{name: "no delegate in the spec: nothing to pass on"},
		{name: "not observed (not created, or its kind gone): passed on, the adapter finds nothing", spec: true, want: true},
		{name: "still fencing: passed on, so the fencer stops", spec: true, want: true,
			delegate: &RemediatorCR{Kind: delegated, Name: testNode}},
		{name: "fenced, its own remediation not finished: passed on, as NHC would", spec: true, want: true,
			delegate: &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, FencedAt: fencedAt()}},
		{name: "succeeded: never timed out", spec: true,
			delegate: &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, FencedAt: fencedAt(), Succeeded: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := notFenced()
			if tt.spec {
				withDelegate(&o)
			}
			o.TimedOut = true
			o.Evidence.Delegate = tt.delegate

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseStopped))
			g.Expect(d.TimeOutDelegate).To(Equal(tt.want))
			if tt.delegate != nil {
				g.Expect(tt.delegate.MayTimeOut()).To(Equal(tt.want), "the adapter applies the same rule")
			}
		})
	}
	t.Run("a CR that reports Succeeded=True is judged the same whether fenced is known", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(RemediatorCR{Succeeded: true}.MayTimeOut()).To(BeFalse())
		g.Expect(RemediatorCR{Fenced: true, FencedAt: ptr.To(testFencedAt)}.MayTimeOut()).To(BeTrue())
	})
}

// TestOwnTaintDone pins when the out-of-service taint this remediation
// added comes off while NHC still keeps the CR.
func TestOwnTaintDone(t *testing.T) {
	ours := func() *Taint { t := ourTaint(); t.Ours = true; return t }
	tests := []struct {
		name   string
		mutate func(o *Observation)
		want   bool
	}{
		{name: "Ready again, released, replacement Ready elsewhere: removed", want: true},
		{name: "kept while the node is not Ready", mutate: func(o *Observation) { o.Node.Ready = false }},
		{name: "kept while a volume is still attached to the node", mutate: func(o *Observation) {
			o.Targets[0].Volumes = []Volume{attachedVolume("a")}
		}},
		{name: "kept while the replacement is not Ready", mutate: func(o *Observation) { o.Targets[0].Replacement = nil }},
		{name: "kept while the old pod is in the API", mutate: func(o *Observation) { o.Targets[0].PodPresent = true }},
		{name: "kept while a target is not recorded", mutate: func(o *Observation) { o.Targets[0].Recorded = false }},
		{name: "kept with no target read (timed out, excluded)", mutate: func(o *Observation) { o.Targets = nil }},
		{name: "someone else's taint is never removed", mutate: func(o *Observation) { o.Node.OutOfServiceTaint = freshTaint() }},
		{name: "another remediation's taint is not ours", mutate: func(o *Observation) {
			o.Node.OutOfServiceTaint = ourTaint()
		}},
		{name: "no taint, nothing to remove", mutate: func(o *Observation) { o.Node.OutOfServiceTaint = nil }},
		{name: "after Succeeded=True too", mutate: func(o *Observation) { o.Succeeded = true }, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := notFenced()
			o.Spec.Release.Strategy = s3gwv1alpha1.ReleaseOutOfServiceTaint
			moved(&o)
			o.Node.Ready, o.Node.OutOfServiceTaint = true, ours()
			if tt.mutate != nil {
				tt.mutate(&o)
			}

			d := Decide(o)

			g.Expect(OwnTaintDone(o)).To(Equal(tt.want))
			g.Expect(d.RemoveOwnTaint).To(Equal(tt.want))
			g.Expect(d.Destructive()).To(BeFalse())
		})
	}
}

// TestDecideOneIncidentPerFence pins what one incident is for a delegate:
// from its fence until the node is seen Ready again.
func TestDecideOneIncidentPerFence(t *testing.T) {
	fencedDelegate := func() Observation {
		o := notFenced()
		withoutDefaultSources(&o)
		withDelegate(&o)
		o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, FencedAt: fencedAt()}
		return o
	}
	// booting: the fenced node's kubelet starts again and posts Ready=False
	// (Unknown → False, not a recovery), renewing its Lease.
	booting := func(o *Observation) {
		at := testFencedAt.Add(30 * time.Second)
		o.Node.Heartbeat = Heartbeat{Ready: ReadyFalse, ReadySince: at, KubeletPosted: at, LeaseRenewed: testNow,
			LeaseDuration: 40 * time.Second}
	}

	t.Run("the node rebooting from the fence: the success is not trusted, and nothing fences again", func(t *testing.T) {
		g := NewWithT(t)
		o := fencedDelegate()
		booting(&o)
		o.Episode = ptr.To(o.Node.Heartbeat.Episode()) // after the restart the boot caused

		d := Decide(o)

		g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
		g.Expect(d.Gate.Missing).To(ContainSubstring("is stale"))
		g.Expect(d.DeleteDelegate).To(BeFalse())
		g.Expect(d.CreateDelegate).To(BeFalse())
		g.Expect(d.Destructive()).To(BeFalse())
	})
	t.Run("the boot restarts the episode, keeping the recovery it followed", func(t *testing.T) {
		g := NewWithT(t)
		o := fencedDelegate()
		recovered := testFailedAt.Add(-time.Hour)
		o.Episode.RecoveredAt = recovered
		booting(&o)

		d := Decide(o)

		g.Expect(d.RestartEpisode).NotTo(BeNil())
		g.Expect(d.RestartEpisode.RecoveredAt).To(Equal(recovered))
		g.Expect(d.DeleteDelegate).To(BeFalse())
	})
	t.Run("Ready again after the fence, then a new failure: the old fence is replaced", func(t *testing.T) {
		g := NewWithT(t)
		o := fencedDelegate()
		// Fenced 30 minutes ago, seen Ready 20 minutes ago, failed again
		// since (the restart already recorded).
		fence, recovered := testNow.Add(-30*time.Minute), testNow.Add(-20*time.Minute)
		o.Evidence.Delegate.FencedAt = &fence
		failedAgain(&o)
		o.Episode = &Episode{Ready: o.Node.Heartbeat.Ready, ReadySince: o.Node.Heartbeat.ReadySince,
			KubeletPosted: o.Node.Heartbeat.KubeletPosted, RecoveredAt: recovered}

		d := Decide(o)

		g.Expect(d.DeleteDelegate).To(BeTrue(), "a real new failure is fenced anew")
		g.Expect(d.Gate.Open).To(BeFalse(), "and the old success is never trusted for it")
	})
	t.Run("a Ready pass records the recovery once, at the node's Ready transition", func(t *testing.T) {
		g := NewWithT(t)
		o := fencedDelegate()
		readyAt := testNow.Add(-5 * time.Second)
		o.Node.Ready = true
		o.Node.Heartbeat = Heartbeat{Ready: ReadyTrue, ReadySince: readyAt, KubeletPosted: testNow, LeaseRenewed: testNow,
			LeaseDuration: 40 * time.Second}

		d := Decide(o)
		g.Expect(d.RecordEpisode).NotTo(BeNil())
		g.Expect(d.RecordEpisode.RecoveredAt).To(Equal(readyAt))
		g.Expect(d.RecordEpisode.ReadySince).To(Equal(o.Episode.ReadySince), "the failure's identity is kept")

		o.Episode = d.RecordEpisode
		g.Expect(Decide(o).RecordEpisode).To(BeNil())
	})
}

// TestKeepSucceeded pins the medik8s pair of a CR NHC keeps across a second
// failure of its node: Succeeded, once True, is never Unknown again.
func TestKeepSucceeded(t *testing.T) {
	secondFailure := func(o *Observation) { o.SuccessReported = true }
	tests := []struct {
		name                  string
		obs                   func() Observation
		mutate                func(o *Observation)
		phase                 s3gwv1alpha1.Phase
		processing, succeeded cond
	}{
		{
			name: "the new failure waits for fencing: Succeeded stays True, Processing says why", obs: notFenced,
			mutate: secondFailure, phase: s3gwv1alpha1.PhaseWaitingForFencing,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonWaitingForFencing},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain},
		},
		{
			name: "the new failure is being moved", obs: fenced,
			mutate: secondFailure, phase: s3gwv1alpha1.PhaseEvicting,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationStarted},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain},
		},
		{
			name: "the new failure is moved: True again, for it", obs: fenced,
			mutate: func(o *Observation) { secondFailure(o); moved(o) }, phase: s3gwv1alpha1.PhaseSucceeded,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationFinished},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished},
		},
		{
			name: "the new failure cannot be moved: False, so escalation may go on", obs: fenced,
			mutate: func(o *Observation) {
				secondFailure(o)
				o.Targets[0].Volumes[0].Replicas = nil
				pastReleaseDeadline(o)
			},
			phase:      s3gwv1alpha1.PhaseFailed,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoHealthyReplica},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoHealthyReplica},
		},
		{
			name: "a first failure is Unknown while at work", obs: notFenced, phase: s3gwv1alpha1.PhaseWaitingForFencing,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonWaitingForFencing},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonWaitingForFencing},
		},
		{
			name: "an excluded node keeps it too", obs: fenced,
			mutate: func(o *Observation) { secondFailure(o); o.Node.Excluded = true }, phase: s3gwv1alpha1.PhaseExcluded,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonExcludedFromRemediation},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := tt.obs()
			if tt.mutate != nil {
				tt.mutate(&o)
			}

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(tt.phase))
			expectConditions(g, Conditions(o, d), tt.processing, tt.succeeded)
		})
	}
}
