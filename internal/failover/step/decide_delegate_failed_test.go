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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

// farFailure is what FAR's Succeeded=False says once its agent failed every
// attempt.
const farFailure = "FenceAgentFailed: Fence agent command has failed"

// delegateGaveUp is the delegate's CR as FAR leaves it after a failed fence
// during this failure.
func delegateGaveUp(o *failover.State) {
	fixture.WithDelegate(o)
	o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: "fencing/" + fixture.NodeName + "-x7k2p",
		CreatedAt: fixture.FencedAt.Add(-30 * time.Second), Failure: farFailure}
	o.Sightings = append(o.Sightings, failover.EvidenceSighting{Name: fixture.DelegateKind + "/fencing/" + fixture.NodeName + "-x7k2p", FailedAt: fixture.PtrTime(fixture.FencedAt)})
}

// onlyTheDelegate leaves the delegate the one source that could prove
// anything without an admin's hand: storage isolation off, the
// out-of-service taint enabled (the default) but absent.
func onlyTheDelegate(o *failover.State) { o.Spec.Fencing.StorageIsolation = ptr.To(false) }

func TestDecideWhenTheDelegateFailed(t *testing.T) {
	failed := func(msg string) (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
		return s3gwv1alpha1.PhaseFailed, metav1.ConditionFalse, msg
	}
	waiting := func(msg string) (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
		return s3gwv1alpha1.PhaseWaitingForFencing, metav1.ConditionUnknown, msg
	}
	tests := []struct {
		name   string
		mutate []func(o *failover.State)
		// phase, Succeeded and a part of the Fenced message.
		want func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string)
		// fencedReason is the Fenced condition's reason.
		fencedReason string
		// replace is true when the delegate is deleted to fence anew.
		replace bool
	}{
		{
			name:   "nothing else can hold: Succeeded=False at once, naming the fencer and its message",
			mutate: []func(o *failover.State){delegateGaveUp, onlyTheDelegate},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return failed("delegate FenceAgentsRemediation/fencing/" + fixture.NodeName + "-x7k2p failed (" + farFailure +
					"); no other evidence source can still prove node " + fixture.NodeName + " fenced")
			},
			fencedReason: s3gwv1alpha1.ReasonDelegateFailed,
		},
		{
			name:   "storage isolation may still hold while Longhorn is installed: keep waiting, say why",
			mutate: []func(o *failover.State){delegateGaveUp},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return waiting("failed (" + farFailure + ")")
			},
			fencedReason: s3gwv1alpha1.ReasonDelegateFailed,
		},
		{
			name:   "storage isolation cannot hold without Longhorn",
			mutate: []func(o *failover.State){delegateGaveUp, func(o *failover.State) { o.LonghornAvailable = false }},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return failed("no other evidence source can still prove")
			},
			fencedReason: s3gwv1alpha1.ReasonDelegateFailed,
		},
		{
			name: "the OutOfServiceTaint release needs proof of shutdown, which storage isolation never gives",
			mutate: []func(o *failover.State){delegateGaveUp, func(o *failover.State) {
				o.Spec.Release.Strategy = s3gwv1alpha1.ReleaseOutOfServiceTaint
			}},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return failed("no other evidence source can still prove")
			},
			fencedReason: s3gwv1alpha1.ReasonDelegateFailed,
		},
		{
			name:   "a listed remediator with no CR for the node yet may still report",
			mutate: []func(o *failover.State){delegateGaveUp, onlyTheDelegate, fixture.WithFAR},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return waiting("failed (" + farFailure + ")")
			},
			fencedReason: s3gwv1alpha1.ReasonDelegateFailed,
		},
		{
			name: "a listed remediator whose CR failed too cannot",
			mutate: []func(o *failover.State){delegateGaveUp, onlyTheDelegate, fixture.WithFAR, func(o *failover.State) {
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "fencing/" + fixture.NodeName + "-nhc",
					Failure: farFailure}}
			}},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return failed("no other evidence source can still prove")
			},
			fencedReason: s3gwv1alpha1.ReasonDelegateFailed,
		},
		{
			name: "a listed remediator kind that is not installed cannot",
			mutate: []func(o *failover.State){delegateGaveUp, onlyTheDelegate, fixture.WithFAR, func(o *failover.State) {
				o.Evidence.InvalidRemediators = map[string]string{fixture.FARKind: fixture.FARKind + " is not installed"}
			}},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return failed("no other evidence source can still prove")
			},
			fencedReason: s3gwv1alpha1.ReasonDelegateFailed,
		},
		{
			name: "a fencer's CR the delegate reuses failed: that is the delegate's failure",
			mutate: []func(o *failover.State){fixture.WithDelegate, onlyTheDelegate, func(o *failover.State) {
				o.Evidence.OtherFencers = []failover.RemediatorCR{{Kind: fixture.DelegateKind, Name: "fencing/" + fixture.NodeName + "-nhc",
					CreatedAt: fixture.FencedAt.Add(-30 * time.Second), Failure: farFailure}}
			}},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return failed("reused FenceAgentsRemediation/fencing/" + fixture.NodeName + "-nhc failed (" + farFailure + ")")
			},
			fencedReason: s3gwv1alpha1.ReasonDelegateFailed,
		},
		{
			name: "a delegate seen failed before the controller saw the kubelet alive again is replaced, not reported",
			mutate: []func(o *failover.State){delegateGaveUp, onlyTheDelegate, func(o *failover.State) {
				o.Sightings[len(o.Sightings)-1].FailedAt = ptr.To(fixture.FailedAt.Add(-time.Hour))
				o.Node.Heartbeat.Seen.Witnessed = true
			}},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return waiting("failed (" + farFailure + ")")
			},
			fencedReason: s3gwv1alpha1.ReasonWaitingForFencing,
			replace:      true,
		},
		{
			name: "a delegate still at work is waited for",
			mutate: []func(o *failover.State){delegateGaveUp, onlyTheDelegate, func(o *failover.State) {
				o.Evidence.Delegate.Failure, o.Evidence.Delegate.Started = "", true
			}},
			want: func() (s3gwv1alpha1.Phase, metav1.ConditionStatus, string) {
				return waiting("has no " + fixture.FARCondition + "=True")
			},
			fencedReason: s3gwv1alpha1.ReasonWaitingForFencing,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.NotFenced()
			for _, m := range tt.mutate {
				m(&o)
			}

			d := Decide(o)

			phase, succeeded, msg := tt.want()
			g.Expect(d.Phase).To(Equal(phase))
			g.Expect(d.Destructive()).To(BeFalse())
			g.Expect(d.Does(failover.CreateFencer)).To(BeFalse(), "never a second fence for this failure")
			g.Expect(d.Does(failover.DeleteFencer)).To(Equal(tt.replace))
			conds := Conditions(o, d)
			g.Expect(meta.FindStatusCondition(conds, s3gwv1alpha1.ConditionSucceeded).Status).To(Equal(succeeded))
			fencedCond := meta.FindStatusCondition(conds, s3gwv1alpha1.ConditionFenced)
			g.Expect(fencedCond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(fencedCond.Reason).To(Equal(tt.fencedReason))
			g.Expect(fencedCond.Message).To(ContainSubstring(msg))
			if phase == s3gwv1alpha1.PhaseFailed {
				g.Expect(d.Reason).To(Equal(s3gwv1alpha1.ReasonDelegateFailed))
				g.Expect(d.Wait).To(Equal(WaitAfterFailure), "a later pass still acts on evidence that turns up")
			}
		})
	}
}

// TestDecideWhenTheDelegateDoesNotStart: a fencer CR nobody picks up (FAR
// not running, or without the right to read its Secrets) is reported with
// its own reason once DelegateStartTimeout passed since the controller
// created it, and the step wakes for that moment; it changes no action.
func TestDecideWhenTheDelegateDoesNotStart(t *testing.T) {
	created := fixture.Now.Add(-30 * time.Second)
	pending := func(started bool) func(o *failover.State) {
		return func(o *failover.State) {
			fixture.WithDelegate(o)
			o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: "fencing/" + fixture.NodeName,
				CreatedAt: created.Add(-time.Hour), Started: started} // the fencer's clock: not read
			o.Sightings = append(o.Sightings, failover.EvidenceSighting{Name: fixture.DelegateKind + "/fencing/" + fixture.NodeName,
				PendingAt: fixture.PtrTime(created)})
		}
	}
	later := func(o *failover.State) { o.Now = o.Now.Add(evidence.DelegateStartTimeout) }
	tests := []struct {
		name   string
		mutate []func(*failover.State)
		reason string
		wakeAt time.Time
	}{
		{"within the start timeout: waited for, and woken when it ends", []func(*failover.State){onlyTheDelegate, pending(false)},
			s3gwv1alpha1.ReasonWaitingForFencing, created.Add(evidence.DelegateStartTimeout)},
		{"past it, not picked up: reported", []func(*failover.State){onlyTheDelegate, pending(false), later},
			s3gwv1alpha1.ReasonDelegateNotStarted, time.Time{}},
		{"past it, picked up (a condition or a finalizer): at work", []func(*failover.State){onlyTheDelegate, pending(true), later},
			s3gwv1alpha1.ReasonWaitingForFencing, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.NotFenced()
			for _, m := range tt.mutate {
				m(&o)
			}
			d := Decide(o)
			g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
			g.Expect(d.Actions).To(BeEmpty(), "the reason changes no action")
			fenced := meta.FindStatusCondition(Conditions(o, d), s3gwv1alpha1.ConditionFenced)
			g.Expect(fenced.Reason).To(Equal(tt.reason))
			if tt.reason == s3gwv1alpha1.ReasonDelegateNotStarted {
				g.Expect(fenced.Message).To(ContainSubstring("shows no sign that its fencer picked it up"))
			}
			if !tt.wakeAt.IsZero() {
				g.Expect(d.WakeAt).To(Equal(tt.wakeAt))
			}
		})
	}
}
