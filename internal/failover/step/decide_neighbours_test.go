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
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// TestDecideTimedOutDelegate pins NHC's rule for its time-out: never on a
// CR that reports Succeeded=True.
func TestDecideTimedOutDelegate(t *testing.T) {
	tests := []struct {
		name     string
		spec     bool // spec.fencing.delegate set
		delegate *failover.RemediatorCR
		want     bool
	}{
		{name: "no delegate in the spec: nothing to pass on"},
		{name: "not observed (not created, or its kind gone): passed on, the adapter finds nothing", spec: true, want: true},
		{name: "still fencing: passed on, so the fencer stops", spec: true, want: true,
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName}},
		{name: "fenced, its own remediation not finished: passed on, as NHC would", spec: true, want: true,
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true}},
		{name: "succeeded: never timed out", spec: true,
			delegate: &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true, Succeeded: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.NotFenced()
			if tt.spec {
				fixture.WithDelegate(&o)
			}
			o.TimedOut = true
			o.Evidence.Delegate = tt.delegate

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseStopped))
			g.Expect(d.Does(failover.TimeOutFencer)).To(Equal(tt.want))
			if tt.delegate != nil {
				g.Expect(tt.delegate.MayTimeOut()).To(Equal(tt.want), "the adapter applies the same rule")
			}
		})
	}
	t.Run("a CR that reports Succeeded=True is judged the same whether fenced is known", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(failover.RemediatorCR{Succeeded: true}.MayTimeOut()).To(BeFalse())
		g.Expect(failover.RemediatorCR{Fenced: true}.MayTimeOut()).To(BeTrue())
	})
}

// TestOwnTaintDone pins when the out-of-service taint this remediation
// added comes off while NHC still keeps the CR.
func TestOwnTaintDone(t *testing.T) {
	ours := func() *failover.Taint { t := fixture.OurTaint(); t.Ours = true; return t }
	tests := []struct {
		name   string
		mutate func(o *failover.State)
		want   bool
	}{
		{name: "Ready again, released, replacement Ready elsewhere: removed", want: true},
		{name: "kept while the node is not Ready", mutate: func(o *failover.State) { o.Node.Ready = false }},
		{name: "kept while a volume is still attached to the node", mutate: func(o *failover.State) {
			o.Targets[0].Volumes = []failover.Volume{fixture.AttachedVolume("a")}
		}},
		{name: "kept while the replacement is not Ready", mutate: func(o *failover.State) { o.Targets[0].Replacement = nil }},
		{name: "kept while the old pod is in the API", mutate: func(o *failover.State) { o.Targets[0].PodPresent = true }},
		{name: "kept while a target is not recorded", mutate: func(o *failover.State) { o.Targets[0].Recorded = false }},
		{name: "kept with no target read (timed out, excluded)", mutate: func(o *failover.State) { o.Targets = nil }},
		{name: "someone else's taint is never removed", mutate: func(o *failover.State) { o.Node.OutOfServiceTaint = fixture.FreshTaint() }},
		{name: "another remediation's taint is not ours", mutate: func(o *failover.State) {
			o.Node.OutOfServiceTaint = fixture.OurTaint()
		}},
		{name: "no taint, nothing to remove", mutate: func(o *failover.State) { o.Node.OutOfServiceTaint = nil }},
		{name: "after Succeeded=True too", mutate: func(o *failover.State) { o.Succeeded = true }, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.NotFenced()
			o.Spec.Release.Strategy = s3gwv1alpha1.ReleaseOutOfServiceTaint
			fixture.Moved(&o)
			o.Node.Ready, o.Node.OutOfServiceTaint = true, ours()
			if tt.mutate != nil {
				tt.mutate(&o)
			}

			d := Decide(o)

			g.Expect(release.OwnTaintDone(o)).To(Equal(tt.want))
			g.Expect(d.Does(failover.RemoveOwnTaint)).To(Equal(tt.want))
			g.Expect(d.Destructive()).To(BeFalse())
		})
	}
}

// TestDecideOneIncidentPerFence pins what one incident is for a delegate:
// from its fence until the node is seen Ready again.
func TestDecideOneIncidentPerFence(t *testing.T) {
	fencedDelegate := func() failover.State {
		o := fixture.NotFenced()
		fixture.WithoutDefaultSources(&o)
		fixture.WithDelegate(&o)
		o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true}
		// The controller saw it succeed at testFencedAt, on its own clock.
		o.Sightings = []failover.EvidenceSighting{{Name: fixture.DelegateKind + "/" + fixture.NodeName, ProvenAt: fixture.PtrTime(fixture.FencedAt)}}
		return o
	}
	// booting: the fenced node's kubelet starts again and posts Ready=False
	// (Unknown → False, not a recovery), renewing its Lease; the controller
	// sees the change now.
	booting := func(o *failover.State) {
		at := fixture.FencedAt.Add(30 * time.Second)
		o.Node.Heartbeat = failover.Heartbeat{Ready: failover.ReadyFalse, ReadySince: at, KubeletPosted: at, LeaseRenewed: fixture.Now,
			LeaseDuration: 40 * time.Second}
		o.Node.Heartbeat.Seen = failover.HeartbeatSighting{KubeletPosted: at, LeaseRenewed: fixture.Now, At: fixture.Now,
			Witnessed: true, Ready: failover.ReadyFalse, ReadySince: at}
	}

	t.Run("the node rebooting from the fence: the success is not trusted, and nothing fences again", func(t *testing.T) {
		g := NewWithT(t)
		o := fencedDelegate()
		booting(&o)
		o.Episode = ptr.To(o.Node.Heartbeat.Episode()) // after the restart the boot caused

		d := Decide(o)

		g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
		g.Expect(d.Gate.Missing).To(ContainSubstring("is not known to be from this failure"))
		g.Expect(d.Does(failover.DeleteFencer)).To(BeFalse())
		g.Expect(d.Does(failover.CreateFencer)).To(BeFalse())
		g.Expect(d.Destructive()).To(BeFalse())
	})
	t.Run("the boot restarts the episode, keeping the recovery it followed", func(t *testing.T) {
		g := NewWithT(t)
		o := fencedDelegate()
		recovered := fixture.FailedAt.Add(-time.Hour)
		o.Episode.RecoveredAt = recovered
		booting(&o)

		d := Decide(o)

		g.Expect(d.RestartEpisode).NotTo(BeNil())
		g.Expect(d.RestartEpisode.RecoveredAt).To(Equal(recovered))
		g.Expect(d.Does(failover.DeleteFencer)).To(BeFalse())
	})
	t.Run("Ready again after the fence, then a new failure: the old fence is replaced", func(t *testing.T) {
		g := NewWithT(t)
		o := fencedDelegate()
		// Seen fenced 30 minutes ago, seen Ready 20 minutes ago, failed
		// again since (the restart already recorded).
		fence, recovered := fixture.Now.Add(-30*time.Minute), fixture.Now.Add(-20*time.Minute)
		o.Sightings[0].ProvenAt = &fence
		failedAgain(&o)
		o.Episode = &failover.Episode{Ready: o.Node.Heartbeat.Ready, ReadySince: o.Node.Heartbeat.ReadySince,
			KubeletPosted: o.Node.Heartbeat.KubeletPosted, RecoveredAt: recovered}

		d := Decide(o)

		g.Expect(d.Does(failover.DeleteFencer)).To(BeTrue(), "a real new failure is fenced anew")
		g.Expect(d.Gate.Open).To(BeFalse(), "and the old success is never trusted for it")
	})
	t.Run("a Ready pass records the recovery once, on the controller's clock", func(t *testing.T) {
		g := NewWithT(t)
		o := fencedDelegate()
		readyAt := fixture.Now.Add(-5 * time.Second)
		o.Node.Ready = true
		o.Node.Heartbeat = failover.Heartbeat{Ready: failover.ReadyTrue, ReadySince: readyAt, KubeletPosted: fixture.Now, LeaseRenewed: fixture.Now,
			LeaseDuration: 40 * time.Second}

		d := Decide(o)
		g.Expect(d.RecordEpisode).NotTo(BeNil())
		g.Expect(d.RecordEpisode.RecoveredAt).To(Equal(fixture.Now), "when the pass saw it, not the kubelet's transition time")
		g.Expect(d.RecordEpisode.RecoveredReadySince).To(Equal(readyAt))
		g.Expect(d.RecordEpisode.ReadySince).To(Equal(o.Episode.ReadySince), "the failure's identity is kept")

		o.Episode, o.Now = d.RecordEpisode, fixture.Now.Add(time.Minute)
		g.Expect(Decide(o).RecordEpisode).To(BeNil(), "the same Ready period")

		o.Node.Heartbeat.ReadySince = fixture.Now.Add(-time.Hour) // a kubelet clock far behind
		g.Expect(Decide(o).RecordEpisode.RecoveredAt).To(Equal(o.Now), "a new Ready period, even one the kubelet dates earlier")
	})
}

// TestKeepSucceeded pins the medik8s pair of a CR NHC keeps across a second
// failure of its node: Succeeded, once True, is never Unknown again.
func TestKeepSucceeded(t *testing.T) {
	secondFailure := func(o *failover.State) { o.SuccessReported = true }
	tests := []struct {
		name                  string
		obs                   func() failover.State
		mutate                func(o *failover.State)
		phase                 s3gwv1alpha1.Phase
		processing, succeeded cond
	}{
		{
			name: "the new failure waits for fencing: Succeeded stays True, Processing says why", obs: fixture.NotFenced,
			mutate: secondFailure, phase: s3gwv1alpha1.PhaseWaitingForFencing,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonWaitingForFencing},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain},
		},
		{
			name: "the new failure is being moved", obs: fixture.Fenced,
			mutate: secondFailure, phase: s3gwv1alpha1.PhaseEvicting,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationStarted},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain},
		},
		{
			name: "the new failure is moved: True again, for it", obs: fixture.Fenced,
			mutate: func(o *failover.State) { secondFailure(o); fixture.Moved(o) }, phase: s3gwv1alpha1.PhaseSucceeded,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationFinished},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished},
		},
		{
			name: "the new failure cannot be moved: False, so escalation may go on", obs: fixture.Fenced,
			mutate: func(o *failover.State) {
				secondFailure(o)
				o.Targets[0].Volumes[0].Replicas = nil
				fixture.PastReleaseDeadline(o)
			},
			phase:      s3gwv1alpha1.PhaseFailed,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoHealthyReplica},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoHealthyReplica},
		},
		{
			name: "a first failure is Unknown while at work", obs: fixture.NotFenced, phase: s3gwv1alpha1.PhaseWaitingForFencing,
			processing: cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonWaitingForFencing},
			succeeded:  cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonWaitingForFencing},
		},
		{
			name: "an excluded node keeps it too", obs: fixture.Fenced,
			mutate: func(o *failover.State) { secondFailure(o); o.Node.Excluded = true }, phase: s3gwv1alpha1.PhaseExcluded,
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

// A stale owner annotation is removed by whatever pass sees it: waiting,
// acting or finished.
func TestDecideDropsStaleTaintOwner(t *testing.T) {
	ready := fixture.NotFenced()
	ready.Node.Ready = true
	for name, o := range map[string]failover.State{
		"waiting for fencing": fixture.NotFenced(),
		"releasing":           fixture.Fenced(),
		"node Ready":          ready,
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Decide(o).Does(failover.DropStaleTaintOwner)).To(BeFalse())
			o.Node.StaleTaintOwner = true
			g.Expect(Decide(o).Does(failover.DropStaleTaintOwner)).To(BeTrue())
		})
	}
	g := NewWithT(t)
	g.Expect(Decide(failover.State{Observation: failover.Observation{Now: fixture.Now}}).Does(failover.DropStaleTaintOwner)).To(BeFalse(), "no node, nothing to drop")
}
