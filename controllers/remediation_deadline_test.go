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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
)

// expectTimedOut runs a pass past the release deadline and checks that the
// remediation failed with the reason and a message naming what holds.
func expectTimedOut(s *failedNodeScenario, st *stepper, reason, holder string) {
	s.w.clock.Step(s3gwv1alpha1.DefaultReleaseTimeout + time.Second)
	s.w.kubelets() // live kubelets renewed their Leases meanwhile
	Expect(st.pass(s.key)).To(Succeed())
	rem := s.w.remediation(s.key)
	Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseFailed))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, reason))
	Expect(conditionOf(rem, s3gwv1alpha1.ConditionSucceeded).Message).To(ContainSubstring(holder))
	Expect(st.eventsWithReason(reason)).To(ConsistOf(ContainSubstring(holder)))
}

var _ = Describe("Replacement deadline", func() {
	It("reports ReplacementNotReady once replacementTimeout passed on the pass's clock, and Succeeded when it comes", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
		s.g.stuck = true
		st := s.w.stepper(managerClient)
		st.until(s.key, 20, isPhase(s3gwv1alpha1.PhaseWaitingForReplacement))
		released := conditionOf(s.w.remediation(s.key), s3gwv1alpha1.ConditionAttachmentsReleased).LastTransitionTime
		Expect(released.Time).To(BeTemporally("~", s.w.clock.Now(), time.Second), "stamped by the pass's clock")

		s.w.clock.Step(s3gwv1alpha1.DefaultReplacementTimeout - time.Second)
		s.w.kubelets()
		Expect(st.pass(s.key)).To(Succeed())
		Expect(s.w.remediation(s.key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForReplacement), "not yet")

		s.w.clock.Step(2 * time.Second)
		s.w.kubelets()
		Expect(st.pass(s.key)).To(Succeed())
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseFailed))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonReplacementNotReady))
		Expect(st.eventsWithReason(remediation.EventReplacementMissing)).To(HaveLen(1))

		s.g.stuck = false
		st.until(s.key, 5, succeeded)
		s.expectMoved()
	})
})

var _ = Describe("Release deadline", func() {
	It("names the finalizer that holds the force-deleted pod", func() {
		// A fencer's taint, not storage isolation: only a fenced node's pod
		// is force-deleted while finalizers would hold it.
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{}, noStorageIsolation)
		s.w.taint("failed", attachments.OutOfServiceTaint())
		pod := &corev1.Pod{}
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.g.pod), pod)).To(Succeed())
		pod.Finalizers = []string{"example.com/backup"}
		Expect(s.w.c.Update(s.w.ctx, pod)).To(Succeed())
		st := s.w.stepper(managerClient)
		st.until(s.key, 10, isPhase(s3gwv1alpha1.PhaseEvicting))
		Expect(st.pass(s.key)).To(Succeed())

		expectTimedOut(s, st, s3gwv1alpha1.ReasonEvictionTimedOut,
			"pod "+s.g.ns+"/"+s.g.pod.Name+" is kept by finalizers example.com/backup")
		Expect(s.w.attachments(s.g, s.w.nodeName("failed"))).To(HaveLen(1), "still nothing released")

		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.g.pod), pod)).To(Succeed())
		pod.Finalizers = nil
		Expect(s.w.c.Update(s.w.ctx, pod)).To(Succeed())
		st.until(s.key, 20, succeeded)
	})

	It("names the Longhorn ticket that holds the volume", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
		// Someone attached the volume through Longhorn's UI as well.
		lhva := &longhorn.VolumeAttachment{}
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKey{Namespace: longhornNS, Name: s.g.pv}, lhva)).To(Succeed())
		lhva.Spec.AttachmentTickets["longhorn-ui"] = &longhorn.AttachmentTicket{ID: "longhorn-ui", Type: "longhorn-api",
			NodeID: s.w.nodeName("failed")}
		Expect(s.w.c.Update(s.w.ctx, lhva)).To(Succeed())
		st := s.w.stepper(managerClient)
		csiTicket := attachrules.AttachmentName(s.g.pv, s.w.nodeName("failed"))
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool { return s.w.tickets(s.g)[csiTicket] == nil })
		Expect(s.w.remediation(s.key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseEvicting))
		Expect(s.w.tickets(s.g)).To(HaveKey("longhorn-ui"), "only the csi-attacher ticket is removed")
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(),
			"Longhorn keeps the volume attached for its UI, so its replica never stops: the pod stays, nothing is released")

		expectTimedOut(s, st, s3gwv1alpha1.ReasonEvictionTimedOut,
			"volume "+s.g.pv+" is kept attached by Longhorn ticket longhorn-ui (type longhorn-api)")
	})

	It("names the external-attacher finalizer that holds a VolumeAttachment's deletion", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseDeleteVolumeAttachment}})
		va := &storagev1.VolumeAttachment{}
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKey{Name: attachrules.AttachmentName(s.g.pv, s.w.nodeName("failed"))}, va)).To(Succeed())
		va.Finalizers = []string{"external-attacher/driver-longhorn-io"} // an external-attacher that never answers
		Expect(s.w.c.Update(s.w.ctx, va)).To(Succeed())
		st := s.w.stepper(managerClient)
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool {
			vas := s.w.attachments(s.g, s.w.nodeName("failed"))
			return len(vas) == 1 && vas[0].DeletionTimestamp != nil
		})

		expectTimedOut(s, st, s3gwv1alpha1.ReasonReleaseTimedOut,
			"VolumeAttachment "+va.Name+" being deleted, kept by finalizers external-attacher/driver-longhorn-io")
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(va), va)).To(Succeed())
		va.Finalizers = nil
		Expect(s.w.c.Update(s.w.ctx, va)).To(Succeed())
	})
})
