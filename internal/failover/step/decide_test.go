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

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

// cond is the part of a condition a test asserts.
type cond struct {
	Type   string
	Status metav1.ConditionStatus
	Reason string
}

// expectConditions checks each wanted condition by type, status and reason.
func expectConditions(g *WithT, actual []metav1.Condition, want ...cond) {
	g.THelper()
	for _, w := range want {
		c := meta.FindStatusCondition(actual, w.Type)
		g.Expect(c).NotTo(BeNil(), "condition %s missing", w.Type)
		g.Expect(cond{c.Type, c.Status, c.Reason}).To(Equal(w))
		g.Expect(c.Message).NotTo(BeEmpty(), "condition %s has no message", w.Type)
	}
}

// writes is every write a Decision can ask for, by name, so a table row
// asserts all of them at once: its zero value means "no writes".
type writes struct {
	RecordTargets        bool
	CreateDelegate       bool
	AddOutOfServiceTaint bool
	Evict                []string // pod names
	UnmarkInUse          []string // Longhorn volume names
	DeleteAttachments    []string // Longhorn volume names
	RemoveTickets        []string // Longhorn volume names
}

// volumeNames names the Longhorn volumes, nil for none.
func volumeNames(volumes []failover.Volume) []string {
	if len(volumes) == 0 {
		return nil
	}
	out := make([]string, 0, len(volumes))
	for _, v := range volumes {
		out = append(out, v.LonghornVolume)
	}
	return out
}

func writesOf(d Decision) writes {
	w := writes{
		RecordTargets:  d.RecordTargets,
		CreateDelegate: d.Does(failover.CreateFencer),
	}
	for _, t := range evictedBy(d) {
		w.Evict = append(w.Evict, t.Name)
	}
	w.RemoveTickets = volumeNames(detachedBy(d))
	release := releasedBy(d)
	volumes := volumeNames(release.Volumes)
	switch {
	case release.Node:
		w.AddOutOfServiceTaint = true
	case release.Strategy == s3gwv1alpha1.ReleaseDeleteVolumeAttachment:
		w.DeleteAttachments = volumes
	default:
		w.UnmarkInUse = volumes
	}
	return w
}

// evictedBy is the targets the decision force-deletes, in order.
func evictedBy(d Decision) []failover.Target {
	var out []failover.Target
	for _, a := range d.Actions {
		if a.Kind == failover.Evict {
			out = append(out, *a.Target)
		}
	}
	return out
}

// releasedBy is the decision's Release action; the zero action if none.
func releasedBy(d Decision) failover.Action {
	for _, a := range d.Actions {
		if a.Kind == failover.Release {
			return a
		}
	}
	return failover.Action{}
}

// detachedBy is the volumes the decision detaches in Longhorn.
func detachedBy(d Decision) []failover.Volume {
	for _, a := range d.Actions {
		if a.Kind == failover.DetachInLonghorn {
			return a.Volumes
		}
	}
	return nil
}

var (
	processingTrueStarted = cond{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationStarted}
	succeededUnknownStart = cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonRemediationStarted}
	fencedByEvidence      = cond{s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingEvidence}
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name   string
		obs    func() failover.State
		mutate []func(o *failover.State)
		phase  s3gwv1alpha1.Phase
		wait   Wait
		conds  []cond
		writes writes
		// absent are condition types that must not be reported.
		absent []string
	}{
		// 1. Node not found.
		{
			name:   "node not found",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) { o.Node = nil }},
			phase:  s3gwv1alpha1.PhaseFailed,
			wait:   WaitNone,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonNodeNotFound},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonNodeNotFound},
			},
			absent: []string{s3gwv1alpha1.ConditionFenced},
		},
		{
			name: "node not found wins over timed out and Disabled mode",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.Node = nil
				o.TimedOut = true
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
			}},
			phase: s3gwv1alpha1.PhaseFailed,
			wait:  WaitNone,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonNodeNotFound}},
		},

		// 2. Timed out.
		{
			name:   "timed out with the gate open",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) { o.TimedOut = true }},
			phase:  s3gwv1alpha1.PhaseStopped,
			wait:   WaitNone,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationStoppedByNHC},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationStoppedByNHC},
			},
		},
		{
			name: "timed out in Disabled mode with an OutOfServiceTaint release recorded",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.TimedOut = true
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
				o.Node.OutOfServiceTaint = fixture.OurTaint()
			}},
			phase: s3gwv1alpha1.PhaseStopped,
			wait:  WaitNone,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationStoppedByNHC}},
		},
		{
			name: "timed out after the move finished still stops",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.TimedOut = true
			}},
			phase: s3gwv1alpha1.PhaseStopped,
			wait:  WaitNone,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationStoppedByNHC}},
		},

		// 3. Node Ready.
		{
			name:   "node Ready with the gate's evidence present",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) { o.Node.Ready = true }},
			phase:  s3gwv1alpha1.PhaseWaitingForNodeFailure,
			wait:   WaitForNodeFailure,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeReady},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonNodeReady},
				{s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonNodeReady},
				{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonEvicting},
			},
		},
		{
			name: "node Ready in Disabled mode with an unrecorded target",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.Node.Ready = true
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
				o.Targets[0].Recorded = false
			}},
			phase: s3gwv1alpha1.PhaseWaitingForNodeFailure,
			wait:  WaitForNodeFailure,
			conds: []cond{{s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonNodeReady}},
		},

		// 4. No targets.
		{
			name:   "no targets",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) { o.Targets = nil }},
			phase:  s3gwv1alpha1.PhaseSucceeded,
			wait:   WaitNone,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoWorkloadOnNode},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNoWorkloadOnNode},
			},
			absent: []string{s3gwv1alpha1.ConditionWorkloadEvicted, s3gwv1alpha1.ConditionFenced},
		},

		// 5. Unrecorded targets.
		{
			name:   "unrecorded target with the gate open is only recorded",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) { o.Targets[0].Recorded = false }},
			phase:  s3gwv1alpha1.PhasePending,
			wait:   WaitForRecord,
			conds:  []cond{processingTrueStarted, succeededUnknownStart},
			writes: writes{RecordTargets: true},
			absent: []string{s3gwv1alpha1.ConditionFenced},
		},
		{
			name: "one unrecorded target among recorded ones blocks every eviction",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
				u := fixture.RecordedTarget("s3gw-1", fixture.AttachedVolume("b"))
				u.Recorded = false
				o.Targets = append(o.Targets, u)
			}},
			phase:  s3gwv1alpha1.PhasePending,
			wait:   WaitForRecord,
			conds:  []cond{processingTrueStarted},
			writes: writes{RecordTargets: true},
		},
		{
			name: "unrecorded targets with a delegate configured do not create it yet",
			obs:  fixture.NotFenced,
			mutate: []func(o *failover.State){fixture.WithDelegate, func(o *failover.State) {
				o.Targets[0].Recorded = false
			}},
			phase:  s3gwv1alpha1.PhasePending,
			wait:   WaitForRecord,
			writes: writes{RecordTargets: true},
		},

		// 6. Gate closed.
		{
			name:  "gate closed",
			obs:   fixture.NotFenced,
			phase: s3gwv1alpha1.PhaseWaitingForFencing,
			wait:  WaitForFencing,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonWaitingForFencing},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonWaitingForFencing},
				{s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForFencing},
				{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonEvicting},
				{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse, s3gwv1alpha1.ReasonReleasing},
				{s3gwv1alpha1.ConditionReplacementReady, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForReplacement},
			},
		},
		{
			name: "gate closed by our own out-of-service taint only",
			obs:  fixture.NotFenced,
			mutate: []func(o *failover.State){fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.Node.OutOfServiceTaint = fixture.OurTaint()
			}},
			phase: s3gwv1alpha1.PhaseWaitingForFencing,
			wait:  WaitForFencing,
			conds: []cond{{s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForFencing}},
		},
		{
			name:   "gate closed with a delegate configured and not created: create it",
			obs:    fixture.NotFenced,
			mutate: []func(o *failover.State){fixture.WithDelegate},
			phase:  s3gwv1alpha1.PhaseWaitingForFencing,
			wait:   WaitForFencing,
			conds:  []cond{{s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForFencing}},
			writes: writes{CreateDelegate: true},
		},
		{
			name: "gate closed with a delegate error: do not create it",
			obs:  fixture.NotFenced,
			mutate: []func(o *failover.State){fixture.WithDelegate, func(o *failover.State) {
				o.Evidence.DelegateError = "template ipmi not found"
			}},
			phase: s3gwv1alpha1.PhaseWaitingForFencing,
			wait:  WaitForFencing,
		},
		{
			name: "gate closed with the delegate created but not fenced",
			obs:  fixture.NotFenced,
			mutate: []func(o *failover.State){fixture.WithDelegate, func(o *failover.State) {
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName}
			}},
			phase: s3gwv1alpha1.PhaseWaitingForFencing,
			wait:  WaitForFencing,
		},
		{
			name: "gate open by other evidence: no delegate needed",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.WithDelegate, fixture.Evicted, func(o *failover.State) {
				o.Targets[0].Volumes = []failover.Volume{fixture.ReleasedVolume("a")}
			}},
			phase: s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:  WaitForReplacement,
		},

		{
			name: "moved off under an open gate that closed since: still waiting for the replacement, Fenced as reported",
			obs:  fixture.NotFenced, // the gate reads closed now: a replica node's Lease is late
			mutate: []func(o *failover.State){fixture.Evicted, fixture.FencedEarlier, func(o *failover.State) {
				o.Targets[0].Volumes = []failover.Volume{fixture.ReleasedVolume("a")}
			}},
			phase:  s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:   WaitForReplacement,
			conds:  []cond{{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, s3gwv1alpha1.ReasonReleased}},
			absent: []string{s3gwv1alpha1.ConditionFenced},
		},
		{
			name: "moved off by someone else before the gate opened: the gate is still read",
			obs:  fixture.NotFenced,
			mutate: []func(o *failover.State){fixture.Evicted, func(o *failover.State) {
				o.Targets[0].Volumes = []failover.Volume{fixture.ReleasedVolume("a")}
			}},
			phase: s3gwv1alpha1.PhaseWaitingForFencing,
			wait:  WaitForFencing,
		},
		{
			name:   "moved off under an open gate, a volume attached to the node again: the gate is read",
			obs:    fixture.NotFenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.FencedEarlier},
			phase:  s3gwv1alpha1.PhaseWaitingForFencing,
			wait:   WaitForFencing,
		},

		// 7. Replica check.
		{
			name: "no healthy replica elsewhere waits: a replica may rebuild",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.Targets[0].Volumes[0].Replicas[0].Healthy = false
			}},
			phase: s3gwv1alpha1.PhaseWaitingForStorage,
			wait:  WaitForStorage,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonNoHealthyReplica},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonNoHealthyReplica},
				fencedByEvidence,
			},
		},
		{
			name: "no healthy replica elsewhere fails once the release deadline passed",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.PastReleaseDeadline, func(o *failover.State) {
				o.Targets[0].Volumes[0].Replicas[0].Healthy = false
			}},
			phase: s3gwv1alpha1.PhaseFailed,
			wait:  WaitAfterFailure,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoHealthyReplica},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoHealthyReplica},
				fencedByEvidence,
			},
		},
		{
			name: "no healthy replica for one volume of a second target blocks the other pod too",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				v := fixture.AttachedVolume("b")
				v.Replicas[0].Healthy = false
				o.Targets = append(o.Targets, fixture.RecordedTarget("s3gw-1", v))
			}},
			phase: s3gwv1alpha1.PhaseWaitingForStorage,
			wait:  WaitForStorage,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonNoHealthyReplica}},
		},
		{
			name: "no healthy replica of an already released volume does not matter",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				v := fixture.ReleasedVolume("a")
				v.Replicas[0].Healthy = false
				o.Targets[0].Volumes = []failover.Volume{v}
			}},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			conds:  []cond{processingTrueStarted, fencedByEvidence},
			writes: writes{Evict: []string{"s3gw-0"}},
		},
		{
			name: "Longhorn unavailable with an unreleased volume waits: it may come back",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.LonghornAvailable = false
			}},
			phase: s3gwv1alpha1.PhaseWaitingForStorage,
			wait:  WaitForStorage,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonLonghornUnavailable},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonLonghornUnavailable},
				fencedByEvidence,
			},
		},
		{
			name:   "Longhorn unavailable past the release deadline fails",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){fixture.PastReleaseDeadline, func(o *failover.State) { o.LonghornAvailable = false }},
			phase:  s3gwv1alpha1.PhaseFailed,
			wait:   WaitAfterFailure,
			conds:  []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonLonghornUnavailable}},
		},
		{
			name: "Longhorn unavailable with only skipped volumes",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.LonghornAvailable = false
				o.Targets[0].Volumes = []failover.Volume{fixture.SkippedVolume("nfs")}
			}},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			writes: writes{Evict: []string{"s3gw-0"}},
		},

		// 8. Evict.
		{
			name:   "pods present are evicted; their volumes wait until the pods are gone from the API",
			obs:    fixture.Fenced,
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			conds:  []cond{processingTrueStarted, succeededUnknownStart, fencedByEvidence},
			writes: writes{Evict: []string{"s3gw-0"}},
		},
		{
			name: "a force-deleted pod held by a finalizer keeps its volume attached (ControllerDetach)",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Strategy(s3gwv1alpha1.ReleaseControllerDetach), func(o *failover.State) {
				o.Targets[0].ForceDeleted = true
			}},
			phase: s3gwv1alpha1.PhaseEvicting,
			wait:  WaitForRelease,
			conds: []cond{{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonEvicting}},
		},
		{
			name: "a force-deleted pod held by a finalizer keeps its volume attached (DeleteVolumeAttachment)",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Strategy(s3gwv1alpha1.ReleaseDeleteVolumeAttachment), func(o *failover.State) {
				o.Targets[0].ForceDeleted = true
			}},
			phase: s3gwv1alpha1.PhaseEvicting,
			wait:  WaitForRelease,
			conds: []cond{{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonEvicting}},
		},
		{
			name: "a force-deleted pod held by a finalizer keeps its volume attached (OutOfServiceTaint)",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.Targets[0].ForceDeleted = true
			}},
			phase: s3gwv1alpha1.PhaseEvicting,
			wait:  WaitForRelease,
			conds: []cond{{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonEvicting}},
		},
		{
			name: "the volumes of a pod gone are released while another target's pod is still present",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, func(o *failover.State) {
				o.Targets = append(o.Targets, fixture.RecordedTarget("s3gw-1", fixture.AttachedVolume("b")))
			}},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			writes: writes{Evict: []string{"s3gw-1"}, UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "only the pods still present are evicted",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, func(o *failover.State) {
				o.Targets[0].Volumes = []failover.Volume{fixture.ReleasedVolume("a")}
				o.Targets = append(o.Targets, fixture.RecordedTarget("s3gw-1", fixture.ReleasedVolume("b")))
			}},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			conds:  []cond{{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonEvicting}},
			writes: writes{Evict: []string{"s3gw-1"}},
		},
		{
			name: "Disabled mode evicts without evidence",
			obs:  fixture.NotFenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
			}},
			phase: s3gwv1alpha1.PhaseEvicting,
			wait:  WaitForRelease,
			conds: []cond{
				processingTrueStarted,
				{s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingDisabled},
			},
			writes: writes{Evict: []string{"s3gw-0"}},
		},

		// 9. Release per strategy.
		{
			name: "ControllerDetach unmarks only the volumes in use on the node",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseControllerDetach), func(o *failover.State) {
				notInUse := fixture.AttachedVolume("b")
				notInUse.InUseOnNode = false
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, notInUse, fixture.ReleasedVolume("c"))
			}},
			phase: s3gwv1alpha1.PhaseReleasing,
			wait:  WaitForRelease,
			conds: []cond{
				processingTrueStarted,
				{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionTrue, s3gwv1alpha1.ReasonEvicted},
				{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse, s3gwv1alpha1.ReasonReleasing},
			},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name:   "an unset strategy means ControllerDetach",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy("")},
			phase:  s3gwv1alpha1.PhaseReleasing,
			wait:   WaitForRelease,
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "ControllerDetach with nothing left to unmark still waits for release",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, func(o *failover.State) {
				o.Targets[0].Volumes[0].InUseOnNode = false
			}},
			phase: s3gwv1alpha1.PhaseReleasing,
			wait:  WaitForRelease,
		},
		{
			name: "DeleteVolumeAttachment deletes only existing Kubernetes attachments",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseDeleteVolumeAttachment), func(o *failover.State) {
				ticketOnly := fixture.AttachedVolume("b")
				ticketOnly.Attachments = nil
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, ticketOnly, fixture.ReleasedVolume("c"))
			}},
			phase:  s3gwv1alpha1.PhaseReleasing,
			wait:   WaitForRelease,
			conds:  []cond{processingTrueStarted, fencedByEvidence},
			writes: writes{DeleteAttachments: []string{"pvc-a"}},
		},
		{
			name:   "OutOfServiceTaint adds the taint (with its owner annotation) once the pods are gone",
			obs:    fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint)},
			phase:  s3gwv1alpha1.PhaseReleasing,
			wait:   WaitForRelease,
			conds:  []cond{processingTrueStarted, fencedByEvidence},
			writes: writes{AddOutOfServiceTaint: true},
		},
		{
			name: "OutOfServiceTaint adds nothing while a peer's taint is there",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.Node.OutOfServiceTaint = &failover.Taint{TimeAdded: fixture.PtrTime(fixture.FencedAt), Owner: "uid-peer"}
			}},
			phase: s3gwv1alpha1.PhaseReleasing,
			wait:  WaitForRelease,
		},
		{
			name: "OutOfServiceTaint is neither recorded nor added while a pod is still in the API",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.Targets = append(o.Targets, fixture.RecordedTarget("s3gw-1", fixture.AttachedVolume("b")))
				o.Targets[0].PodPresent = false
			}},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			writes: writes{Evict: []string{"s3gw-1"}},
		},
		{
			name:   "ControllerDetach leaves a live kubelet's volumesInUse alone (Ready=False)",
			obs:    fixture.FencedByIsolation,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.AliveKubelet},
			phase:  s3gwv1alpha1.PhaseReleasing,
			wait:   WaitForRelease,
			conds:  []cond{{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse, s3gwv1alpha1.ReasonKubeletAlive}},
		},
		{
			// Deleting the pod would start the attach-detach controller's
			// 6-minute force detach, a release after the evidence was checked.
			name:   "ControllerDetach does not force-delete a pod behind a live kubelet",
			obs:    fixture.FencedByIsolation,
			mutate: []func(o *failover.State){fixture.AliveKubelet},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			conds:  []cond{{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse, s3gwv1alpha1.ReasonKubeletAlive}},
		},
		{
			name:   "ControllerDetach force-deletes behind a live kubelet a pod whose volumes it no longer uses",
			obs:    fixture.FencedByIsolation,
			mutate: []func(o *failover.State){fixture.AliveKubelet, func(o *failover.State) { o.Targets[0].Volumes[0].InUseOnNode = false }},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			writes: writes{Evict: []string{"s3gw-0"}},
		},
		{
			name: "storage isolation alone does not force-delete a pod finalizers would keep in the API",
			obs:  fixture.FencedByIsolation,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.Targets[0].Finalizers = []string{"example.com/hold"}
			}},
			phase: s3gwv1alpha1.PhaseEvicting,
			wait:  WaitForRelease,
			conds: []cond{{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonPodFinalizers}},
		},
		{
			name: "a fencer's evidence force-deletes a pod with finalizers: the node stays fenced",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.Targets[0].Finalizers = []string{"example.com/hold"}
			}},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			writes: writes{Evict: []string{"s3gw-0"}},
		},
		{
			name:   "DeleteVolumeAttachment force-deletes behind a live kubelet: the release follows at once",
			obs:    fixture.FencedByIsolation,
			mutate: []func(o *failover.State){fixture.AliveKubelet, fixture.Strategy(s3gwv1alpha1.ReleaseDeleteVolumeAttachment)},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			writes: writes{Evict: []string{"s3gw-0"}},
		},
		{
			name: "ControllerDetach leaves volumesInUse alone while the node Lease is unexpired (Ready=Unknown)",
			obs:  fixture.FencedByIsolation,
			mutate: []func(o *failover.State){fixture.Evicted, func(o *failover.State) {
				o.Node.Heartbeat.LeaseRenewed = fixture.Now.Add(-30 * time.Second)
				o.Node.Heartbeat.Seen.LeaseRenewed, o.Node.Heartbeat.Seen.At = o.Node.Heartbeat.LeaseRenewed, o.Node.Heartbeat.LeaseRenewed
			}},
			phase: s3gwv1alpha1.PhaseReleasing,
			wait:  WaitForRelease,
			conds: []cond{{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse, s3gwv1alpha1.ReasonKubeletAlive}},
		},
		{
			name:   "the other strategies release behind a live kubelet: it unmounts, and the detach is the normal path",
			obs:    fixture.FencedByIsolation,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseDeleteVolumeAttachment), fixture.AliveKubelet},
			phase:  s3gwv1alpha1.PhaseReleasing,
			wait:   WaitForRelease,
			writes: writes{DeleteAttachments: []string{"pvc-a"}},
		},
		{
			name:   "OutOfServiceTaint adds nothing when a foreign taint is there",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint)},
			phase:  s3gwv1alpha1.PhaseReleasing,
			wait:   WaitForRelease,
		},
		{
			name: "OutOfServiceTaint adds nothing when our own taint is there",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.Node.OutOfServiceTaint = fixture.OurTaint()
			}},
			phase: s3gwv1alpha1.PhaseReleasing,
			wait:  WaitForRelease,
		},
		{
			name: "OutOfServiceTaint adds nothing once every volume is released",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.Targets[0].Volumes = []failover.Volume{fixture.ReleasedVolume("a")}
			}},
			phase: s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:  WaitForReplacement,
		},

		// Skipped volumes are never released.
		{
			name: "ControllerDetach never unmarks a skipped volume",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseControllerDetach), func(o *failover.State) {
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, fixture.SkippedVolume("nfs"))
			}},
			phase:  s3gwv1alpha1.PhaseReleasing,
			wait:   WaitForRelease,
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "DeleteVolumeAttachment never deletes a skipped volume's attachment",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseDeleteVolumeAttachment), func(o *failover.State) {
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, fixture.SkippedVolume("nfs"))
			}},
			phase:  s3gwv1alpha1.PhaseReleasing,
			wait:   WaitForRelease,
			writes: writes{DeleteAttachments: []string{"pvc-a"}},
		},
		{
			name: "only skipped volumes: nothing to release under any strategy",
			obs:  fixture.FencedByFAR,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.Targets[0].Volumes = []failover.Volume{fixture.SkippedVolume("nfs")}
			}},
			phase: s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:  WaitForReplacement,
			conds: []cond{{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, s3gwv1alpha1.ReasonReleased}},
		},
		{
			name: "only skipped volumes with DeleteVolumeAttachment",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseDeleteVolumeAttachment), func(o *failover.State) {
				o.Targets[0].Volumes = []failover.Volume{fixture.SkippedVolume("nfs")}
			}},
			phase: s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:  WaitForReplacement,
		},

		// 10. Waiting for replacement.
		{
			name: "everything released, no replacement yet",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Targets[0].Replacement = nil
			}},
			phase: s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:  WaitForReplacement,
			conds: []cond{
				processingTrueStarted,
				fencedByEvidence,
				{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionTrue, s3gwv1alpha1.ReasonEvicted},
				{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, s3gwv1alpha1.ReasonReleased},
				{s3gwv1alpha1.ConditionReplacementReady, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForReplacement},
			},
		},
		{
			name: "one of two targets replaced",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				other := fixture.RecordedTarget("s3gw-1", fixture.ReleasedVolume("b"))
				other.PodPresent = false
				o.Targets = append(o.Targets, other)
			}},
			phase: s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:  WaitForReplacement,
			conds: []cond{{s3gwv1alpha1.ConditionReplacementReady, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForReplacement}},
		},
		{
			name: "replacement Ready but a volume still attached: keep releasing",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Targets[0].Volumes[0].Tickets = []failover.Ticket{{ID: "longhorn-ui", Type: "longhorn-api"}}
			}},
			phase: s3gwv1alpha1.PhaseReleasing,
			wait:  WaitForRelease,
			conds: []cond{{s3gwv1alpha1.ConditionReplacementReady, metav1.ConditionTrue, s3gwv1alpha1.ReasonReplacementReady}},
		},

		// 11. Success.
		{
			name:   "all released, no pod present, all replaced",
			obs:    fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved},
			phase:  s3gwv1alpha1.PhaseSucceeded,
			wait:   WaitNone,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationFinished},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished},
				{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionTrue, s3gwv1alpha1.ReasonEvicted},
				{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, s3gwv1alpha1.ReasonReleased},
				{s3gwv1alpha1.ConditionReplacementReady, metav1.ConditionTrue, s3gwv1alpha1.ReasonReplacementReady},
			},
		},
		{
			name: "success with a skipped volume left attached",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, fixture.SkippedVolume("nfs"))
			}},
			phase: s3gwv1alpha1.PhaseSucceeded,
			wait:  WaitNone,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished}},
		},
		{
			name: "success stays success when the node is Ready again",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Node.Ready = true
				o.Node.OutOfServiceTaint = fixture.OurTaint()
			}},
			phase: s3gwv1alpha1.PhaseSucceeded,
			wait:  WaitNone,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished}},
		},
		{
			name: "success stays success when the evidence went away",
			obs:  fixture.NotFenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Node.OutOfServiceTaint = nil
			}},
			phase: s3gwv1alpha1.PhaseSucceeded,
			wait:  WaitNone,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished}},
		},

		// 12. Replacement timeout.
		{
			name: "no replacement after the default timeout",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Targets[0].Replacement = nil
				o.ReleasedSince = fixture.PtrTime(fixture.Now.Add(-s3gwv1alpha1.DefaultReplacementTimeout - time.Second))
			}},
			phase: s3gwv1alpha1.PhaseFailed,
			wait:  WaitAfterFailure,
			conds: []cond{
				{s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonReplacementNotReady},
				{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonReplacementNotReady},
				{s3gwv1alpha1.ConditionReplacementReady, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForReplacement},
			},
		},
		{
			name: "no replacement within the default timeout",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Targets[0].Replacement = nil
				o.ReleasedSince = fixture.PtrTime(fixture.Now.Add(-s3gwv1alpha1.DefaultReplacementTimeout))
			}},
			phase: s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:  WaitForReplacement,
		},
		{
			name: "no replacement after spec.replacementTimeout",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Targets[0].Replacement = nil
				o.Spec.ReplacementTimeout = &metav1.Duration{Duration: time.Minute}
				o.ReleasedSince = fixture.PtrTime(fixture.Now.Add(-2 * time.Minute))
			}},
			phase: s3gwv1alpha1.PhaseFailed,
			wait:  WaitAfterFailure,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonReplacementNotReady}},
		},
		{
			name: "released more recently than spec.replacementTimeout: still waiting",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Targets[0].Replacement = nil
				o.Spec.ReplacementTimeout = &metav1.Duration{Duration: 10 * time.Minute}
				o.ReleasedSince = fixture.PtrTime(fixture.Now.Add(-6 * time.Minute))
			}},
			phase: s3gwv1alpha1.PhaseWaitingForReplacement,
			wait:  WaitForReplacement,
		},
		{
			name: "replacement timeout reported even when the node is Ready again",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){fixture.Moved, func(o *failover.State) {
				o.Targets[0].Replacement = nil
				o.Node.Ready = true
				o.ReleasedSince = fixture.PtrTime(fixture.Now.Add(-time.Hour))
			}},
			phase: s3gwv1alpha1.PhaseFailed,
			wait:  WaitAfterFailure,
			conds: []cond{{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonReplacementNotReady}},
		},
		{
			name: "no timeout while a pod is still present",
			obs:  fixture.Fenced,
			mutate: []func(o *failover.State){func(o *failover.State) {
				o.Targets[0].Volumes = []failover.Volume{fixture.ReleasedVolume("a")}
				o.ReleasedSince = fixture.PtrTime(fixture.Now.Add(-time.Hour))
			}},
			phase:  s3gwv1alpha1.PhaseEvicting,
			wait:   WaitForRelease,
			writes: writes{Evict: []string{"s3gw-0"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := tt.obs()
			for _, m := range tt.mutate {
				m(&o)
			}

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(tt.phase))
			g.Expect(d.Wait).To(Equal(tt.wait))
			g.Expect(writesOf(d)).To(Equal(tt.writes))
			wantDestructive := len(tt.writes.Evict)+len(tt.writes.UnmarkInUse)+len(tt.writes.DeleteAttachments) > 0 || tt.writes.AddOutOfServiceTaint
			g.Expect(d.Destructive()).To(Equal(wantDestructive))
			expectConditions(g, Conditions(o, d), tt.conds...)
			for _, c := range tt.absent {
				g.Expect(meta.FindStatusCondition(Conditions(o, d), c)).To(BeNil(), "condition %s", c)
			}
			// Every decision reports the medik8s pair, once per type.
			g.Expect(meta.FindStatusCondition(Conditions(o, d), s3gwv1alpha1.ConditionProcessing)).NotTo(BeNil())
			g.Expect(meta.FindStatusCondition(Conditions(o, d), s3gwv1alpha1.ConditionSucceeded)).NotTo(BeNil())
			seen := map[string]bool{}
			for _, c := range Conditions(o, d) {
				g.Expect(seen[c.Type]).To(BeFalse(), "condition %s reported twice", c.Type)
				seen[c.Type] = true
			}
			g.Expect(d.Finished()).To(Equal(d.Phase == s3gwv1alpha1.PhaseSucceeded))
		})
	}
}
