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

package remediation

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/release"
)

var statusNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// statusScope is a pass over a remediation of node worker-1, whose kubelet
// died ten minutes ago, with one recorded target whose pod is still there
// and whose volume is attached to the node, fenced by an admin's
// out-of-service taint: Decide force-deletes the pod.
func statusScope() *scope {
	died := statusNow.Add(-10 * time.Minute)
	fencedAt := statusNow.Add(-time.Minute)
	hb := failover.Heartbeat{Ready: failover.ReadyUnknown, ReadySince: died.Add(50 * time.Second), KubeletPosted: died,
		LeaseRenewed: died, LeaseDuration: 40 * time.Second}
	rem := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", UID: "uid-rem", Generation: 2,
		Finalizers: []string{Finalizer}}}
	target := s3gwv1alpha1.TargetPod{Namespace: "s3gw", Name: "gw-0", UID: "uid-gw-0", State: s3gwv1alpha1.TargetFound,
		Volumes: []s3gwv1alpha1.TargetVolume{{ClaimName: "data", PersistentVolume: "pv-a", LonghornVolume: "pvc-a",
			State: s3gwv1alpha1.VolumeAttached}}}
	rem.Status.Targets = []s3gwv1alpha1.TargetPod{target}
	replica := failover.Replica{Name: "pvc-a-r-2", Node: "worker-2", Healthy: true, Host: failover.ReplicaNode{
		Longhorn:  failover.LonghornNode{Found: true, Status: failover.ReadyTrue},
		Heartbeat: failover.Heartbeat{LeaseRenewed: statusNow, LeaseDuration: 40 * time.Second}}}
	s := &scope{rem: rem, nodeName: "worker-1", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}},
		now: metav1.NewTime(statusNow), targets: rem.Status.Targets}
	s.obs = failover.Observation{Now: statusNow, LonghornAvailable: true,
		Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeRequireEvidence}},
		Node: &failover.Node{Name: "worker-1", Heartbeat: hb,
			OutOfServiceTaint: &failover.Taint{TimeAdded: &fencedAt}},
		Episode: &failover.Episode{Ready: hb.Ready, ReadySince: hb.ReadySince, KubeletPosted: hb.KubeletPosted},
		Targets: []failover.Target{{Namespace: "s3gw", Name: "gw-0", UID: "uid-gw-0", Recorded: true, PodPresent: true,
			Volumes: []failover.Volume{{Claim: "data", PersistentVolume: "pv-a", LonghornVolume: "pvc-a",
				Replicas: []failover.Replica{replica}, Attachments: []failover.Attachment{{Name: "csi-a"}}, InUseOnNode: true}}}},
	}
	s.decision = failover.Decide(s.obs)
	return s
}

// pass derives the next status and makes it the status the next pass reads,
// at now.
func pass(s *scope, now time.Time) s3gwv1alpha1.S3GWRemediationStatus {
	s.now, s.obs.Now = metav1.NewTime(now), now
	s.decision = failover.Decide(s.obs)
	s.rem.Status = nextStatus(s)
	s.targets = s.rem.Status.Targets
	return s.rem.Status
}

func TestNextStatusConditions(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	g.Expect(s.decision.Phase).To(Equal(s3gwv1alpha1.PhaseEvicting))

	st := pass(s, statusNow)
	fenced := meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionFenced)
	g.Expect(fenced).NotTo(BeNil())
	g.Expect(fenced.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(fenced.ObservedGeneration).To(Equal(int64(2)))
	g.Expect(fenced.LastTransitionTime.Time).To(Equal(statusNow), "the pass's clock stamps it")
	g.Expect(st.Conditions).To(HaveEach(HaveField("Message", Not(BeEmpty()))))
	g.Expect(meta.IsStatusConditionTrue(st.Conditions, s3gwv1alpha1.ConditionProcessing)).To(BeTrue())
	g.Expect(st.Phase).To(Equal(s3gwv1alpha1.PhaseEvicting))
	g.Expect(st.PhaseTransitionTime.Time).To(Equal(statusNow))
	g.Expect(st.StartTime.Time).To(Equal(statusNow))
	g.Expect(st.FencingEvidence).To(ConsistOf(failover.EvidenceOutOfServiceTaint))

	// A later pass deciding the same keeps every transition time.
	later := statusNow.Add(5 * time.Second)
	st = pass(s, later)
	g.Expect(meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionFenced).LastTransitionTime.Time).To(Equal(statusNow))
	g.Expect(st.PhaseTransitionTime.Time).To(Equal(statusNow))
	g.Expect(st.StartTime.Time).To(Equal(statusNow))

	// The pod gone: WorkloadEvicted turns True at that pass, Fenced stays.
	s.obs.Targets[0].PodPresent = false
	st = pass(s, later.Add(time.Second))
	evicted := meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionWorkloadEvicted)
	g.Expect(evicted.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(evicted.LastTransitionTime.Time).To(Equal(later.Add(time.Second)))
	g.Expect(meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionFenced).LastTransitionTime.Time).To(Equal(statusNow))
	g.Expect(st.Phase).To(Equal(s3gwv1alpha1.PhaseReleasing))
}

func TestNextStatusTargets(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	s.obs.Targets[0].PodPresent = false
	s.obs.Targets[0].Volumes[0].Attachments, s.obs.Targets[0].Volumes[0].InUseOnNode = nil, false
	s.obs.Targets[0].Replacement = &failover.Replacement{Name: "gw-1", NodeName: "worker-2"}

	st := pass(s, statusNow)
	g.Expect(st.Targets).To(HaveLen(1))
	g.Expect(st.Targets[0].State).To(Equal(s3gwv1alpha1.TargetReplaced))
	g.Expect(st.Targets[0].Volumes[0].State).To(Equal(s3gwv1alpha1.VolumeReleased))
	g.Expect(st.Targets[0].Replacement).To(Equal(&s3gwv1alpha1.ReplacementPod{Name: "gw-1", NodeName: "worker-2"}))
	g.Expect(st.Phase).To(Equal(s3gwv1alpha1.PhaseSucceeded))
	g.Expect(st.CompletionTime.Time).To(Equal(statusNow))
	g.Expect(s.rem.Status.Targets[0].Volumes[0].State).To(Equal(s3gwv1alpha1.VolumeReleased))

	// A pass that observed no target (NHC timed it out) keeps them as
	// recorded, and the completion time as it was.
	s.obs.Targets, s.obs.TimedOut = nil, true
	st = pass(s, statusNow.Add(time.Minute))
	g.Expect(st.Targets[0].Replacement).NotTo(BeNil())
	g.Expect(st.CompletionTime.Time).To(Equal(statusNow))
}

func TestNextStatusReadsNothingBack(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	before := s.rem.Status.DeepCopy()
	s.obs.Targets[0].PodPresent = false
	s.decision = failover.Decide(s.obs)
	_ = nextStatus(s)
	g.Expect(s.rem.Status).To(Equal(*before), "nextStatus derives; it does not write the status it read")
	g.Expect(s.targets[0].State).To(Equal(s3gwv1alpha1.TargetFound))
}

func TestNextStatusOwnTaint(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	taint := release.OutOfServiceTaint()
	taint.TimeAdded = &metav1.Time{Time: statusNow}

	// A peer's taint is not ours to record.
	s.node.Spec.Taints = []corev1.Taint{taint}
	s.node.Annotations = map[string]string{release.TaintOwnerAnnotation: "uid-peer"}
	g.Expect(pass(s, statusNow).AddedTaints).To(BeEmpty())

	// Ours, as the node's owner annotation says, however it got there, is
	// recorded once.
	s.node.Annotations[release.TaintOwnerAnnotation] = string(s.rem.UID)
	g.Expect(pass(s, statusNow).AddedTaints).To(ConsistOf(taint))
	g.Expect(pass(s, statusNow.Add(time.Second)).AddedTaints).To(ConsistOf(taint))
}

func TestNextStatusRestartKeepsWhatIsToCleanUp(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	delegate := &corev1.ObjectReference{Kind: "FenceAgentsRemediation", Namespace: "s3gw", Name: "worker-1", UID: types.UID("uid-far")}
	s.obs.Evidence.DelegateRef = delegate
	taint := release.OutOfServiceTaint()
	s.rem.Status.AddedTaints = []corev1.Taint{taint}
	pass(s, statusNow)

	// The node was Ready again and failed anew.
	s.obs.Node.Heartbeat.ReadySince = statusNow.Add(time.Second)
	s.obs.Evidence.DelegateRef = nil
	st := pass(s, statusNow.Add(2*time.Second))
	g.Expect(s.decision.RestartEpisode).NotTo(BeNil())
	g.Expect(st.Targets).To(BeEmpty())
	g.Expect(st.FencingEvidence).To(BeEmpty())
	g.Expect(st.Conditions).To(ConsistOf(
		HaveField("Type", s3gwv1alpha1.ConditionProcessing), HaveField("Type", s3gwv1alpha1.ConditionSucceeded)))
	g.Expect(st.FailureEpisode.NotReadySince.Time).To(Equal(statusNow.Add(time.Second)))
	g.Expect(st.AddedTaints).To(ConsistOf(taint), "still to be removed")
	g.Expect(st.Delegate).To(Equal(delegate), "still to be deleted")
}

func TestNextStatusRestartKeepsSucceededForNHC(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	succeededAt := metav1.NewTime(statusNow.Add(-time.Minute))
	s.rem.Status.Conditions = []metav1.Condition{
		{Type: s3gwv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: s3gwv1alpha1.ReasonRemediationFinished,
			LastTransitionTime: succeededAt},
		{Type: s3gwv1alpha1.ConditionFenced, Status: metav1.ConditionTrue, Reason: s3gwv1alpha1.ReasonFencingEvidence},
	}
	s.rem.Status.CompletionTime = &succeededAt
	s.obs.Succeeded, s.obs.SuccessReported = true, true

	// The node was Ready again and failed anew.
	s.obs.Node.Heartbeat.ReadySince = statusNow.Add(time.Second)
	st := pass(s, statusNow.Add(2*time.Second))
	g.Expect(s.decision.RestartEpisode).NotTo(BeNil())
	succeeded := meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionSucceeded)
	g.Expect(succeeded.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(succeeded.Reason).To(Equal(s3gwv1alpha1.ReasonNodeFailedAgain))
	g.Expect(succeeded.LastTransitionTime).To(Equal(succeededAt), "never left True")
	g.Expect(meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionFenced)).To(BeNil(), "the old failure's")
	g.Expect(st.CompletionTime).To(BeNil(), "no success of the new failure yet")
}

func TestNextStatusEvidenceOnlyOnceActedOn(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	s.obs.Node.OutOfServiceTaint = nil
	st := pass(s, statusNow)
	g.Expect(st.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
	g.Expect(st.FencingEvidence).To(BeEmpty())
	g.Expect(meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionFenced).Status).To(Equal(metav1.ConditionFalse))
}

func TestTransitionOf(t *testing.T) {
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: statusNow.Add(d)} }
	status := func(p s3gwv1alpha1.Phase, since *metav1.Time) *s3gwv1alpha1.S3GWRemediationStatus {
		return &s3gwv1alpha1.S3GWRemediationStatus{Phase: p, PhaseTransitionTime: since}
	}
	now := metav1.NewTime(statusNow)
	tests := []struct {
		name          string
		before, after *s3gwv1alpha1.S3GWRemediationStatus
		want          transition
	}{
		{"no change", status(s3gwv1alpha1.PhaseEvicting, at(-time.Minute)), status(s3gwv1alpha1.PhaseEvicting, at(-time.Minute)),
			transition{}},
		{"the first phase", status("", nil), status(s3gwv1alpha1.PhasePending, &now),
			transition{entered: s3gwv1alpha1.PhasePending}},
		{"a phase ends", status(s3gwv1alpha1.PhaseEvicting, at(-time.Minute)), status(s3gwv1alpha1.PhaseReleasing, &now),
			transition{entered: s3gwv1alpha1.PhaseReleasing, left: s3gwv1alpha1.PhaseEvicting, lasted: time.Minute}},
		{"the remediation ends: counted", status(s3gwv1alpha1.PhaseWaitingForReplacement, at(-time.Second)),
			status(s3gwv1alpha1.PhaseSucceeded, &now),
			transition{entered: s3gwv1alpha1.PhaseSucceeded, left: s3gwv1alpha1.PhaseWaitingForReplacement, lasted: time.Second, ended: true}},
		{"from one final phase to another: counted once already", status(s3gwv1alpha1.PhaseFailed, at(-time.Second)),
			status(s3gwv1alpha1.PhaseStopped, &now),
			transition{entered: s3gwv1alpha1.PhaseStopped, left: s3gwv1alpha1.PhaseFailed, lasted: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(transitionOf(tt.before, tt.after, now)).To(Equal(tt.want))
		})
	}
}
