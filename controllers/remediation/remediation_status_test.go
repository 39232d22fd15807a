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
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/step"
)

var statusNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// statusScope is a step over a remediation of node worker-1, whose kubelet
// died ten minutes ago, with one recorded target whose pod is still there
// and whose volume is attached to the node, fenced by an admin's
// out-of-service taint: the step force-deletes the pod.
func statusScope() *scope {
	died := statusNow.Add(-10 * time.Minute)
	fencedAt := statusNow.Add(-time.Minute)
	hb := failover.Heartbeat{Ready: failover.ReadyUnknown, ReadySince: died.Add(50 * time.Second), KubeletPosted: died,
		LeaseRenewed: died, LeaseDuration: 40 * time.Second}
	untainted := metav1.NewMicroTime(died.Add(time.Minute)) // the controller saw the node without the taint then
	rem := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", UID: "uid-rem", Generation: 2,
		Finalizers: []string{Finalizer}}}
	rem.Status.Memory = s3gwv1alpha1.RemediationMemory{
		Episode: &s3gwv1alpha1.FailureEpisode{ReadyStatus: hb.Ready, NotReadySince: ptr.To(metav1.NewTime(hb.ReadySince)),
			KubeletPostedAt: ptr.To(metav1.NewTime(died))},
		Heartbeat: &s3gwv1alpha1.HeartbeatSighting{SeenAt: metav1.NewMicroTime(died), LeaseRenewTime: ptr.To(metav1.NewMicroTime(died)),
			KubeletPostedAt: ptr.To(metav1.NewTime(died))},
		EvidenceSightings: []s3gwv1alpha1.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: &untainted}},
		Targets: []s3gwv1alpha1.RecordedTarget{{Namespace: "s3gw", Name: "gw-0", UID: "uid-gw-0",
			Volumes: []s3gwv1alpha1.RecordedVolume{{ClaimName: "data", PersistentVolume: "pv-a", LonghornVolume: "pvc-a"}}}},
	}
	replica := failover.Replica{Name: "pvc-a-r-2", Node: "worker-2", Healthy: true, Host: failover.ReplicaNode{
		Longhorn:  failover.LonghornNode{Found: true, Status: failover.ReadyTrue},
		Heartbeat: failover.Heartbeat{LeaseRenewed: statusNow, LeaseDuration: 40 * time.Second}}}
	s := &scope{rem: rem, nodeName: "worker-1", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}},
		now: metav1.NewTime(statusNow), targets: rem.Status.Memory.Targets}
	s.obs = failover.Observation{Now: statusNow, LonghornAvailable: true,
		Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeRequireEvidence}},
		Node: &failover.Node{Name: "worker-1", Heartbeat: hb,
			OutOfServiceTaint: &failover.Taint{TimeAdded: &fencedAt}},
		Targets: []failover.Target{{Namespace: "s3gw", Name: "gw-0", UID: "uid-gw-0", PodPresent: true,
			Volumes: []failover.Volume{{Claim: "data", PersistentVolume: "pv-a", LonghornVolume: "pvc-a",
				Replicas: []failover.Replica{replica}, Attachments: []failover.Attachment{{Name: "csi-a"}}, InUseOnNode: true}}}},
	}
	s.decision, s.memory = step.Step(s.obs, rem.Status.Memory)
	return s
}

// pass runs the step at now and makes the status it derives the status the
// next step reads.
func pass(s *scope, now time.Time) s3gwv1alpha1.S3GWRemediationStatus {
	s.now, s.obs.Now = metav1.NewTime(now), now
	s.decision, s.memory = step.Step(s.obs, s.rem.Status.Memory)
	s.rem.Status = statusOf(s)
	return s.rem.Status
}

func TestStatusConditions(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	g.Expect(s.decision.Phase).To(Equal(s3gwv1alpha1.PhaseEvicting))

	st := pass(s, statusNow)
	fenced := meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionFenced)
	g.Expect(fenced).NotTo(BeNil())
	g.Expect(fenced.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(fenced.ObservedGeneration).To(Equal(int64(2)))
	g.Expect(fenced.LastTransitionTime.Time).To(Equal(statusNow), "the step's clock stamps it")
	g.Expect(st.Memory.FencedAt.Time).To(Equal(statusNow), "the memory records when the gate was found open")
	g.Expect(st.Conditions).To(HaveEach(HaveField("Message", Not(BeEmpty()))))
	g.Expect(meta.IsStatusConditionTrue(st.Conditions, s3gwv1alpha1.ConditionProcessing)).To(BeTrue())
	g.Expect(st.Phase).To(Equal(s3gwv1alpha1.PhaseEvicting))
	g.Expect(st.PhaseTransitionTime.Time).To(Equal(statusNow))
	g.Expect(st.StartTime.Time).To(Equal(statusNow))
	g.Expect(st.FencingEvidence).To(ConsistOf(evidence.EvidenceOutOfServiceTaint))

	// A later step deciding the same keeps every transition time.
	later := statusNow.Add(5 * time.Second)
	st = pass(s, later)
	g.Expect(meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionFenced).LastTransitionTime.Time).To(Equal(statusNow))
	g.Expect(st.Memory.FencedAt.Time).To(Equal(statusNow))
	g.Expect(st.PhaseTransitionTime.Time).To(Equal(statusNow))
	g.Expect(st.StartTime.Time).To(Equal(statusNow))

	// The pod gone: WorkloadEvicted turns True at that step, Fenced stays.
	s.obs.Targets[0].PodPresent = false
	st = pass(s, later.Add(time.Second))
	evicted := meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionWorkloadEvicted)
	g.Expect(evicted.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(evicted.LastTransitionTime.Time).To(Equal(later.Add(time.Second)))
	g.Expect(meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionFenced).LastTransitionTime.Time).To(Equal(statusNow))
	g.Expect(st.Phase).To(Equal(s3gwv1alpha1.PhaseReleasing))
}

func TestStatusTargets(t *testing.T) {
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
	g.Expect(st.Memory.SucceededAt.Time).To(Equal(statusNow))
	g.Expect(st.Memory.Targets).To(HaveLen(1), "the target stays recorded")

	// A step that observed no target (NHC timed it out) keeps them as
	// recorded and shown, and the completion time as it was.
	s.obs.Targets, s.obs.TimedOut = nil, true
	st = pass(s, statusNow.Add(time.Minute))
	g.Expect(st.Targets[0].Replacement).NotTo(BeNil())
	g.Expect(st.Memory.Targets).To(HaveLen(1))
	g.Expect(st.CompletionTime.Time).To(Equal(statusNow))
}

// TestStatusIsOutputOnly: the step reads its memory, never the conditions
// or phase it reported. Conditions that claim the opposite of the memory
// change no decision; the status a step derives leaves the one it read as
// it was.
func TestStatusIsOutputOnly(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	want := s.decision
	long := metav1.NewTime(statusNow.Add(-time.Hour))
	s.rem.Status.Conditions = []metav1.Condition{
		{Type: s3gwv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: s3gwv1alpha1.ReasonRemediationFinished, LastTransitionTime: long},
		{Type: s3gwv1alpha1.ConditionFenced, Status: metav1.ConditionTrue, Reason: s3gwv1alpha1.ReasonFencingEvidence, LastTransitionTime: long},
		{Type: s3gwv1alpha1.ConditionWorkloadEvicted, Status: metav1.ConditionTrue, Reason: s3gwv1alpha1.ReasonEvicted, LastTransitionTime: long},
		{Type: s3gwv1alpha1.ConditionAttachmentsReleased, Status: metav1.ConditionTrue, Reason: s3gwv1alpha1.ReasonReleased, LastTransitionTime: long},
	}
	s.rem.Status.Phase, s.rem.Status.CompletionTime = s3gwv1alpha1.PhaseSucceeded, &long
	before := s.rem.Status.DeepCopy()
	s.decision, s.memory = step.Step(s.obs, s.rem.Status.Memory)
	g.Expect(s.decision.Phase).To(Equal(want.Phase), "a success the conditions claim is not the memory's")
	g.Expect(s.decision.Actions).To(Equal(want.Actions), "nor a release deadline that passed an hour ago")
	_ = statusOf(s)
	g.Expect(s.rem.Status).To(Equal(*before), "statusOf derives; it does not write the status it read")
}

func TestStatusOwnTaint(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	taint := attachments.OutOfServiceTaint()
	taint.TimeAdded = &metav1.Time{Time: statusNow}

	// A peer's taint is not ours to show.
	s.node.Spec.Taints = []corev1.Taint{taint}
	s.node.Annotations = map[string]string{attachments.TaintOwnerAnnotation: "uid-peer@" + statusNow.UTC().Format(time.RFC3339)}
	g.Expect(pass(s, statusNow).AddedTaints).To(BeEmpty())

	// Ours, as the node's owner annotation says, however it got there, is
	// shown once.
	s.node.Annotations[attachments.TaintOwnerAnnotation] = string(s.rem.UID) + "@" + statusNow.UTC().Format(time.RFC3339)
	g.Expect(pass(s, statusNow).AddedTaints).To(ConsistOf(taint))
	g.Expect(pass(s, statusNow.Add(time.Second)).AddedTaints).To(ConsistOf(taint))
}

func TestStatusRestartKeepsWhatIsToCleanUp(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	delegate := &corev1.ObjectReference{Kind: "FenceAgentsRemediation", Namespace: "s3gw", Name: "worker-1", UID: types.UID("uid-far")}
	s.obs.Evidence.DelegateRef = delegate
	taint := attachments.OutOfServiceTaint()
	s.rem.Status.AddedTaints = []corev1.Taint{taint}
	pass(s, statusNow)

	// The node was Ready again and failed anew.
	s.obs.Node.Heartbeat.ReadySince = statusNow.Add(time.Second)
	s.obs.Evidence.DelegateRef = nil
	st := pass(s, statusNow.Add(2*time.Second))
	g.Expect(s.decision.RestartEpisode).NotTo(BeNil())
	g.Expect(st.Targets).To(BeEmpty())
	g.Expect(st.Memory.Targets).To(BeEmpty())
	g.Expect(st.Memory.FencedAt).To(BeNil())
	g.Expect(st.FencingEvidence).To(BeEmpty())
	g.Expect(st.Conditions).To(ConsistOf(
		HaveField("Type", s3gwv1alpha1.ConditionProcessing), HaveField("Type", s3gwv1alpha1.ConditionSucceeded)))
	g.Expect(st.Memory.Episode.NotReadySince.Time).To(Equal(statusNow.Add(time.Second)))
	g.Expect(st.AddedTaints).To(ConsistOf(taint), "still to be removed")
	g.Expect(st.Delegate).To(Equal(delegate), "still to be deleted")
}

func TestStatusRestartKeepsSucceededForNHC(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	succeededAt := metav1.NewTime(statusNow.Add(-time.Minute))
	s.rem.Status.Conditions = []metav1.Condition{
		{Type: s3gwv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: s3gwv1alpha1.ReasonRemediationFinished,
			LastTransitionTime: succeededAt},
		{Type: s3gwv1alpha1.ConditionFenced, Status: metav1.ConditionTrue, Reason: s3gwv1alpha1.ReasonFencingEvidence},
	}
	s.rem.Status.Memory.SucceededAt, s.rem.Status.Memory.SuccessReported = &succeededAt, true

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
	g.Expect(st.Memory.SuccessReported).To(BeTrue(), "still reported, for NHC")
}

func TestStatusEvidenceOnlyOnceActedOn(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	s.obs.Node.OutOfServiceTaint = nil
	st := pass(s, statusNow)
	g.Expect(st.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
	g.Expect(st.FencingEvidence).To(BeEmpty())
	g.Expect(st.Memory.FencedAt).To(BeNil())
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

// What the controller saw is kept in its memory as it was seen, to the
// microsecond: a restarted controller reads back the same sightings.
func TestStatusKeepsSightings(t *testing.T) {
	g := NewWithT(t)
	s := statusScope()
	seen := statusNow.Add(-10*time.Minute + 123456*time.Microsecond)
	s.rem.Status.Memory.Heartbeat.SeenAt = metav1.NewMicroTime(seen)
	s.rem.Status.Memory.Heartbeat.Witnessed, s.rem.Status.Memory.Heartbeat.ChangedUnderCondition = true, true
	proven := metav1.NewMicroTime(statusNow.Add(-time.Minute + 654321*time.Microsecond))
	s.rem.Status.Memory.EvidenceSightings = append(s.rem.Status.Memory.EvidenceSightings,
		s3gwv1alpha1.EvidenceSighting{Name: "FenceAgentsRemediation/worker-1", ProvenAt: &proven})

	written, err := json.Marshal(pass(s, statusNow))
	g.Expect(err).NotTo(HaveOccurred())
	var st s3gwv1alpha1.S3GWRemediationStatus
	g.Expect(json.Unmarshal(written, &st)).To(Succeed())
	g.Expect(st.Memory).To(BeComparableTo(s.memory), "the memory survives its round trip through the API")
	g.Expect(st.Memory.Heartbeat.SeenAt.Time).To(BeTemporally("==", seen))

	// A step that read no evidence (NHC timed the CR out) keeps them as
	// they were, a CR no longer there included.
	s.rem.Status.Memory.EvidenceSightings = append(s.rem.Status.Memory.EvidenceSightings,
		s3gwv1alpha1.EvidenceSighting{Name: "FenceAgentsRemediation/worker-1", ProvenAt: &proven})
	kept := s.rem.Status.Memory.EvidenceSightings
	s.obs.TimedOut = true
	g.Expect(pass(s, statusNow).Memory.EvidenceSightings).To(Equal(kept))
}
