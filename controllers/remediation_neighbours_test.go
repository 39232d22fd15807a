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

package controllers

import (
	"time"

	"github.com/medik8s/common/pkg/annotations"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// These stories follow what the medik8s neighbours really do in the cases
// their code takes (docs/architecture.md, "The neighbours' rules").

// label sets or removes (value "") one label of the node.
func (w *world) label(short, key, value string) {
	node := w.node(short)
	if value == "" {
		delete(node.Labels, key)
	} else {
		node.Labels[key] = value
	}
	Expect(w.c.Update(w.ctx, node)).To(Succeed())
}

var _ = Describe("The neighbours' rules", func() {
	It("leaves a node labelled exclude-from-remediation after the CR exists alone, and resumes once the label goes", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{}, noStorageIsolation)
		st := s.w.stepper(managerClient)
		st.until(s.key, 5, isPhase(s3gwv1alpha1.PhaseWaitingForFencing))

		// An admin excludes the node; then evidence arrives that would open
		// the gate.
		s.w.label("failed", failover.ExcludeFromRemediationLabel, "true")
		s.w.taint("failed", attachments.OutOfServiceTaint())
		recorder := newWriteRecorder()
		excluded := s.w.stepper(recorder)
		for range 3 {
			Expect(excluded.pass(s.key)).To(Succeed())
		}
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseExcluded))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonExcludedFromRemediation))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonExcludedFromRemediation))
		Expect(conditionOf(rem, s3gwv1alpha1.ConditionSucceeded).Message).To(ContainSubstring(failover.ExcludeFromRemediationLabel + "=true"))
		Expect(excluded.eventsWithReason(remediation.EventRemediationSkipped)).To(HaveLen(1), "told once, on entering the phase")
		Expect(s.w.podExists(s.g.pod)).To(BeTrue())
		Expect(s.w.attachments(s.g, s.w.nodeName("failed"))).To(HaveLen(1))
		Expect(rem.Status.Targets).To(HaveLen(1), "what was recorded stays recorded")
		Expect(recorder.Writes()).To(HaveEach(HaveField("Kind", "S3GWRemediation")), "only the CR's status is written")

		s.w.label("failed", failover.ExcludeFromRemediationLabel, "")
		st.until(s.key, 20, succeeded)
		s.expectMoved()
	})

	It("never passes NHC's time-out on to a delegate that already succeeded", func() {
		// The only replica fails as the node is fenced: no healthy replica
		// holds the move after the fence.
		s, _ := newDelegateScenario(true, withReplicasOn("healthy"))
		w, e := s.w, s.e
		st := w.stepper(managerClient)
		far := s.fenceByDelegate(st)
		w.failReplicas(s.g)
		w.farSucceeded(far)
		st.until(s.key, 10, isPhase(s3gwv1alpha1.PhaseWaitingForStorage))
		Expect(w.remediation(s.key).Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonNoHealthyReplica))

		Expect(e.TimeOut(w.ctx, w.asUnstructured(s.key))).To(Succeed())
		Expect(st.pass(s.key)).To(Succeed())
		Expect(w.remediation(s.key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseStopped))
		Expect(w.delegateOf(s.key).GetAnnotations()).NotTo(HaveKey(annotations.NhcTimedOut),
			"NHC never times out a Succeeded CR; FAR would turn its conditions False")
		Expect(fenced(w.delegateOf(s.key))).To(BeTrue())
		s.recover(st)
	})

	It("takes its out-of-service taint off a node Ready again while NHC keeps the CR, once s3gw runs elsewhere", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}})
		st := s.w.stepper(managerClient)
		st.until(s.key, 20, succeeded)
		s.expectMoved()
		Expect(attachments.TaintOwner(s.w.node("failed"), attachments.OutOfServiceTaint())).To(Equal(s.w.remediation(s.key).UID))

		// Back, and NHC keeps the CR (healthyDelay, a paused NHC): the taint
		// would evict every pod scheduled onto the healthy node.
		s.w.setReady("failed", true)
		Expect(st.pass(s.key)).To(Succeed())
		node := s.w.node("failed")
		Expect(attachments.HasTaint(node, attachments.OutOfServiceTaint())).To(BeFalse())
		Expect(node.Annotations).NotTo(HaveKey(attachments.TaintOwnerAnnotation), "the owner annotation goes with the taint")
		rem := s.w.remediation(s.key)
		Expect(rem.Status.AddedTaints).To(BeEmpty())
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished))
		Expect(st.eventsWithReason(remediation.EventTaintRemoved)).To(HaveLen(2), "on the CR and on the node")

		// A taint added afterwards by someone else stays, and NHC's
		// deletion still cleans up.
		s.w.taint("failed", attachments.OutOfServiceTaint())
		Expect(st.pass(s.key)).To(Succeed())
		s.recover(st)
		Expect(attachments.HasTaint(s.w.node("failed"), attachments.OutOfServiceTaint())).To(BeTrue())
		Expect(st.eventsWithReason(remediation.EventTaintRemoved)).To(HaveLen(2))
	})

	It("never fences a node again while it comes back from the delegate's fence; a real new failure is fenced anew", func() {
		s, _ := newDelegateScenario(true)
		w, g := s.w, s.g
		st := w.stepper(managerClient)
		first := s.fenceByDelegate(st)

		// The fence rebooted the node: before the next pass its kubelet
		// starts and posts Ready=False, renewing its Lease.
		w.clock.Step(30 * time.Second)
		w.booting("failed")
		for range 5 {
			Expect(st.pass(s.key)).To(Succeed())
		}
		rem := w.remediation(s.key)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
		Expect(conditionOf(rem, s3gwv1alpha1.ConditionFenced).Message).To(ContainSubstring("is not known to be from this failure"),
			"a node showing life after the fence is not trusted on that fence")
		delegate := w.delegateOf(s.key)
		Expect(delegate).NotTo(BeNil())
		Expect(delegate.GetUID()).To(Equal(first.GetUID()), "the same fence: no second reboot")
		Expect(delegate.GetDeletionTimestamp()).To(BeNil())
		Expect(st.eventsWithReason(remediation.EventDelegateCreated)).To(HaveLen(1))
		Expect(w.podExists(g.pod)).To(BeTrue())

		// Back: the incident is over.
		w.setReady("failed", true)
		Expect(st.pass(s.key)).To(Succeed())
		Expect(w.remediation(s.key).Status.Memory.Episode.RecoveredAt).NotTo(BeNil())

		// A real new failure: fenced anew, never on the old success.
		w.clock.Step(5 * time.Minute)
		w.setReady("failed", false)
		second := s.fenceByDelegate(st)
		Expect(second.GetUID()).NotTo(Equal(first.GetUID()))
		Expect(st.eventsWithReason(remediation.EventDelegateCreated)).To(HaveLen(2))
		// Trusted at once, though the controller saw the heartbeat change
		// the new failure brought: kube-controller-manager marked the node
		// Unknown 50 s after kube-apiserver stored the last renewal.
		st.until(s.key, 20, succeeded)
		Expect(w.remediation(s.key).Status.FencingEvidence).To(ConsistOf(
			"delegate FenceAgentsRemediation/" + second.GetNamespace() + "/" + second.GetName()))
	})
})

// booting has the node's kubelet start again, as after a reboot: it posts
// Ready=False now (Unknown → False, no recovery) and renews its Lease.
func (w *world) booting(short string) {
	node := w.node(short)
	now := metav1.NewTime(w.clock.Now())
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
		Reason: "KubeletNotReady", LastHeartbeatTime: now, LastTransitionTime: now}}
	Expect(w.c.Status().Update(w.ctx, node)).To(Succeed())
	w.renewLease(short, now.Time)
}

// farSucceeded has FAR finish its remediation after the fence, as FAR
// reports it: FenceAgentActionSucceeded and Succeeded True.
func (w *world) farSucceeded(far *unstructured.Unstructured) {
	Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(far), far)).To(Succeed())
	now := w.clock.Now().UTC().Format(time.RFC3339)
	conds, _, _ := unstructured.NestedSlice(far.Object, "status", "conditions")
	conds = append(conds, map[string]any{"type": "Succeeded", "status": "True",
		"reason": "RemediationFinishedSuccessfully", "message": "set by the test", "lastTransitionTime": now})
	Expect(unstructured.SetNestedSlice(far.Object, conds, "status", "conditions")).To(Succeed())
	Expect(w.c.Status().Update(w.ctx, far)).To(Succeed())
}
