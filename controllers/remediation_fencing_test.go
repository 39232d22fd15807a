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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
)

func isPhase(p s3gwv1alpha1.Phase) func(*s3gwv1alpha1.S3GWRemediation) bool {
	return func(rem *s3gwv1alpha1.S3GWRemediation) bool { return rem.Status.Phase == p }
}

var _ = Describe("The fencing gate", func() {
	It("holds while no evidence proves the node fenced, and nothing is deleted or released", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}}, noStorageIsolation)
		s.w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionFalse) // fencing still running
		st := closedGate(s, "no node.kubernetes.io/out-of-service taint",
			"storage isolation: Longhorn does not report the node down", "has no FenceAgentActionSucceeded=True")
		Expect(st.eventsWithReason(remediation.EventWaitingForFencing)).To(HaveLen(1), "announced once, not every pass")
		Expect(st.metric("s3gw_remediation_fencing_blocked", map[string]string{
			"reason": "OutOfServiceTaint,StorageIsolation,FenceAgentsRemediation"})).To(Equal(1.0))
	})

	DescribeTable("opens on each evidence source alone",
		func(spec s3gwv1alpha1.S3GWRemediationSpec, prove func(*failedNodeScenario), proof string) {
			s := newFailedNodeScenario(spec, noStorageIsolation)
			st := s.w.stepper(managerClient)
			st.until(s.key, 5, isPhase(s3gwv1alpha1.PhaseWaitingForFencing))
			Expect(s.w.podExists(s.g.pod)).To(BeTrue())

			prove(s)
			st.until(s.key, 20, succeeded)
			rem := s.expectMoved()
			Expect(rem.Status.FencingEvidence).To(ConsistOf(ContainSubstring(proof)))
		},
		Entry("an out-of-service taint set by an admin or fencer",
			s3gwv1alpha1.S3GWRemediationSpec{},
			func(s *failedNodeScenario) { s.w.taint("failed", attachments.OutOfServiceTaint()) },
			"OutOfServiceTaint"),
		Entry("a listed remediator's CR with its condition True",
			s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}},
			func(s *failedNodeScenario) { s.w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionTrue) },
			"FenceAgentsRemediation/"),
		Entry("storage isolation: Longhorn reports the node down and it holds no replica",
			s3gwv1alpha1.S3GWRemediationSpec{},
			func(s *failedNodeScenario) { s.w.longhornSeesDown("failed") },
			"StorageIsolation"),
	)

	It("ignores the out-of-service taint when that source is switched off", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
			OutOfServiceTaint: ptr.To(false)}}, noStorageIsolation)
		s.w.taint("failed", attachments.OutOfServiceTaint())
		st := s.w.stepper(managerClient)
		for range 4 {
			Expect(st.pass(s.key)).To(Succeed())
		}
		Expect(s.w.remediation(s.key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue())
	})

	It("acts without evidence in Disabled mode and says so every time", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
			Mode: s3gwv1alpha1.FencingModeDisabled}}, noStorageIsolation)
		st := s.w.stepper(managerClient)
		st.until(s.key, 20, succeeded)
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingDisabled))
		Expect(rem.Status.FencingEvidence).To(ConsistOf("FencingDisabled"))
		Expect(st.eventsWithReason(remediation.EventFencingDisabled)).NotTo(BeEmpty())
		Expect(st.eventsWithReason(remediation.EventFencingDisabled)).To(HaveEach(ContainSubstring("Warning")))
	})

	It("creates the delegate fencing CR beside its template as NHC would, waits for it, and deletes it on cleanup", func() {
		s, spec := newDelegateScenario(false)
		w, g := s.w, s.g
		st := w.stepper(managerClient)
		st.until(s.key, 5, func(rem *s3gwv1alpha1.S3GWRemediation) bool { return rem.Status.Delegate != nil })

		// In the template's namespace (the fencer's), where FAR reads the
		// Secrets the template names, not in the remediation's.
		fencerNS := spec.Fencing.Delegate.Namespace
		Expect(fencerNS).NotTo(Equal(w.ns))
		far := &unstructured.Unstructured{}
		far.SetAPIVersion("fence-agents-remediation.medik8s.io/v1alpha1")
		far.SetKind("FenceAgentsRemediation")
		Expect(w.c.Get(w.ctx, client.ObjectKey{Namespace: fencerNS, Name: w.nodeName("failed")}, far)).To(Succeed())
		Expect(far.GetAnnotations()).To(HaveKeyWithValue("remediation.medik8s.io/node-name", w.nodeName("failed")))
		Expect(far.GetAnnotations()).NotTo(HaveKey("remediation.medik8s.io/template-name"),
			"NHC would take a CR with its template-name annotation for its own")
		Expect(far.Object["spec"]).To(HaveKeyWithValue("agent", "fence_ipmilan"))
		rem := w.remediation(s.key)
		Expect(far.GetOwnerReferences()).To(BeEmpty(), "owner references cannot cross namespaces")
		Expect(far.GetLabels()).To(HaveKeyWithValue(fencing.RemediationUIDLabel, string(rem.UID)))
		Expect(far.GetAnnotations()).To(HaveKeyWithValue(fencing.RemediationAnnotation, w.ns+"/"+rem.Name))
		Expect(rem.Status.Delegate).NotTo(BeNil())
		Expect(*rem.Status.Delegate).To(And(HaveField("Namespace", fencerNS), HaveField("Name", far.GetName()),
			HaveField("UID", far.GetUID())))
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
		Expect(w.podExists(g.pod)).To(BeTrue(), "nothing moves before the fencer reports success")
		Expect(st.eventsWithReason(remediation.EventDelegateCreated)).To(ConsistOf(
			ContainSubstring("Created FenceAgentsRemediation " + fencerNS + "/" + far.GetName())))

		for range 2 {
			Expect(st.pass(s.key)).To(Succeed())
		}
		Expect(w.fencersFor("failed")).To(HaveLen(1), "the delegate is created once, found again by its marker")

		w.setCondition(far, "FenceAgentActionSucceeded", metav1.ConditionTrue)
		st.until(s.key, 20, succeeded)
		rem = s.expectMoved()
		Expect(rem.Status.FencingEvidence).To(ConsistOf("delegate FenceAgentsRemediation/" + fencerNS + "/" + w.nodeName("failed")))

		s.recover(st)
		Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(far), far)).NotTo(Succeed(), "the delegate goes with the CR")
	})

	It("reports a delegate its fencer never picks up, with its own reason, event and metric, until the fencer starts", func() {
		s, _ := newDelegateScenario(false)
		w := s.w
		st := w.stepper(managerClient)
		st.until(s.key, 5, func(rem *s3gwv1alpha1.S3GWRemediation) bool { return rem.Status.Delegate != nil })
		Expect(conditionOf(w.remediation(s.key), s3gwv1alpha1.ConditionFenced).Reason).To(Equal(s3gwv1alpha1.ReasonWaitingForFencing))

		// FAR never picks its CR up (not running, or without the right to
		// read its Secrets): no condition, no finalizer.
		w.clock.Step(evidence.DelegateStartTimeout + time.Second)
		Expect(st.pass(s.key)).To(Succeed())
		fenced := conditionOf(w.remediation(s.key), s3gwv1alpha1.ConditionFenced)
		Expect(fenced.Reason).To(Equal(s3gwv1alpha1.ReasonDelegateNotStarted))
		Expect(fenced.Message).To(ContainSubstring("shows no sign that its fencer picked it up"))
		Expect(st.eventsWithReason(remediation.EventDelegateNotStarted)).To(HaveLen(1))
		Expect(st.metric("s3gw_remediation_fencing_blocked", map[string]string{"reason": s3gwv1alpha1.ReasonDelegateNotStarted})).To(Equal(1.0))
		Expect(st.pass(s.key)).To(Succeed())
		Expect(st.eventsWithReason(remediation.EventDelegateNotStarted)).To(HaveLen(1), "told once")

		// The fencer starts: it is at work, and the wait is an ordinary one.
		w.setCondition(w.delegateOf(s.key), "Processing", metav1.ConditionTrue)
		Expect(st.pass(s.key)).To(Succeed())
		Expect(conditionOf(w.remediation(s.key), s3gwv1alpha1.ConditionFenced).Reason).To(Equal(s3gwv1alpha1.ReasonWaitingForFencing))
		Expect(st.metric("s3gw_remediation_fencing_blocked", map[string]string{"reason": s3gwv1alpha1.ReasonDelegateNotStarted})).To(Equal(0.0))
	})

	It("finds the delegate it created before a restart by its marker, and cleans up after a crash mid-cleanup", func() {
		s, _ := newDelegateScenario(true)
		w, e := s.w, s.e
		st := w.stepper(managerClient)
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool { return w.delegateOf(s.key) != nil })
		first := w.delegateOf(s.key)

		// A manager that crashed after creating the CR, before writing
		// status, starts with nothing in status: it must not fence twice.
		rem := w.remediation(s.key)
		rem.Status.Delegate = nil
		Expect(w.c.Status().Update(w.ctx, rem)).To(Succeed())
		newManager := w.stepper(managerClient)
		for range 3 {
			Expect(newManager.pass(s.key)).To(Succeed())
		}
		Expect(w.fencersFor("failed")).To(HaveLen(1), "no second fencing CR")
		Expect(w.remediation(s.key).Status.Delegate).To(HaveField("UID", first.GetUID()))
		Expect(newManager.eventsWithReason(remediation.EventDelegateCreated)).To(BeEmpty())

		// NHC deletes the CR; a manager that crashed right after deleting
		// the delegate, before dropping its finalizer, finishes the job.
		w.setReady("failed", true)
		_, err := e.NodeHealthy(w.ctx, w.nodeName("failed"))
		Expect(err).NotTo(HaveOccurred())
		Expect(w.c.Delete(w.ctx, first)).To(Succeed())
		Expect(newManager.pass(s.key)).To(Succeed())
		remaining, err := e.NodeHealthy(w.ctx, w.nodeName("failed"))
		Expect(err).NotTo(HaveOccurred())
		Expect(remaining).To(BeZero(), "the finalizer is gone")
		Expect(w.fencersFor("failed")).To(BeEmpty())
	})

	It("starts no new step once NHC times the remediation out, and still cleans up", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}, Fencing: s3gwv1alpha1.FencingSpec{
			Remediators: farEvidence()}}, noStorageIsolation)
		st := s.w.stepper(managerClient)
		st.until(s.key, 5, isPhase(s3gwv1alpha1.PhaseWaitingForFencing))

		Expect(s.e.TimeOut(s.w.ctx, s.w.asUnstructured(s.key))).To(Succeed())
		Expect(st.pass(s.key)).To(Succeed())
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseStopped), "%+v", rem.Status.Conditions)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationStoppedByNHC))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationStoppedByNHC))
		Expect(st.eventsWithReason("RemediationStopped")).To(HaveLen(1))

		// Evidence arriving late changes nothing.
		s.w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionTrue)
		for range 3 {
			Expect(st.pass(s.key)).To(Succeed())
		}
		Expect(s.w.podExists(s.g.pod)).To(BeTrue())
		Expect(attachments.HasTaint(s.w.node("failed"), attachments.OutOfServiceTaint())).To(BeFalse())
		Expect(st.eventsWithReason("RemediationStopped")).To(HaveLen(1))

		s.recover(st)
	})

	It("removes its out-of-service taint when NHC deletes the CR mid-way", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}})
		// The replacement cannot start yet: hold the ReplicaSet double back
		// by keeping its node NotReady, so the CR is mid-way when deleted.
		st := s.w.stepper(managerClient)
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool {
			return attachments.HasTaint(s.w.node("failed"), attachments.OutOfServiceTaint())
		})
		rem := s.w.remediation(s.key)
		Expect(rem.Status.AddedTaints).To(HaveLen(1))

		_, err := s.e.NodeHealthy(s.w.ctx, s.w.nodeName("failed"))
		Expect(err).NotTo(HaveOccurred())
		Expect(st.pass(s.key)).To(Succeed())
		Expect(attachments.HasTaint(s.w.node("failed"), attachments.OutOfServiceTaint())).To(BeFalse())
		remaining, err := s.e.NodeHealthy(s.w.ctx, s.w.nodeName("failed"))
		Expect(err).NotTo(HaveOccurred())
		Expect(remaining).To(BeZero())
	})

	It("drops its owner annotation once a fencer removed its taint by key, and never takes an admin's later taint for its own", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}})
		st := s.w.stepper(managerClient)
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool {
			return attachments.HasTaint(s.w.node("failed"), attachments.OutOfServiceTaint())
		})
		Expect(attachments.TaintOwner(s.w.node("failed"), attachments.OutOfServiceTaint())).To(Equal(s.w.remediation(s.key).UID))

		// FAR finishes: it removes the taint by key, our annotation stays.
		s.w.untaint("failed", attachments.OutOfServiceTaint())
		Expect(s.w.node("failed").Annotations).To(HaveKey(attachments.TaintOwnerAnnotation))
		// An admin adds the taint before our next pass.
		admins := attachments.OutOfServiceTaint()
		admins.TimeAdded = ptr.To(metav1.NewTime(time.Now().Add(time.Minute).Truncate(time.Second)))
		s.w.taint("failed", admins)
		Expect(attachments.TaintOwner(s.w.node("failed"), admins)).To(BeEmpty(), "the stale annotation names our taint, not this one")

		Expect(st.pass(s.key)).To(Succeed())
		Expect(s.w.node("failed").Annotations).NotTo(HaveKey(attachments.TaintOwnerAnnotation), "a stale owner annotation is removed")

		_, err := s.e.NodeHealthy(s.w.ctx, s.w.nodeName("failed"))
		Expect(err).NotTo(HaveOccurred())
		Expect(st.pass(s.key)).To(Succeed())
		Expect(attachments.HasTaint(s.w.node("failed"), attachments.OutOfServiceTaint())).To(BeTrue(), "the admin's taint stays")
	})

	It("never removes an out-of-service taint it did not add", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}}, noStorageIsolation)
		s.w.taint("failed", attachments.OutOfServiceTaint()) // the fencer's
		st := s.w.stepper(managerClient)
		st.until(s.key, 20, succeeded)
		Expect(s.w.remediation(s.key).Status.AddedTaints).To(BeEmpty())
		s.recover(st)
		Expect(attachments.HasTaint(s.w.node("failed"), attachments.OutOfServiceTaint())).To(BeTrue(),
			"the fencer removes its own taint")
	})
})

// newDelegateScenario is a failed node whose s3gw gateway only a FAR
// delegate can move (its template in the fencer's namespace, with or
// without multiple-templates support), and NHC's CR for it.
func newDelegateScenario(multi bool, opts ...gatewayOption) (*failedNodeScenario, s3gwv1alpha1.S3GWRemediationSpec) {
	w := newWorld(suiteCtx)
	w.addNode("healthy", true)
	w.addNode("failed", true)
	g := w.addGateway("s3gw", "failed", "healthy", append([]gatewayOption{noStorageIsolation}, opts...)...)
	w.setReady("failed", false)
	spec := w.delegateSpec(multi)
	e := w.nhc(w.template("s3gw", spec, false))
	return &failedNodeScenario{w: w, g: g, e: e, key: w.remediate(e, "failed")}, spec
}

var _ = Describe("An invalid delegate", func() {
	It("is reported in the Fenced condition and nothing is created or deleted", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
			OutOfServiceTaint: ptr.To(false), StorageIsolation: ptr.To(false),
			Delegate: &s3gwv1alpha1.DelegateFencing{APIVersion: "fence-agents-remediation.medik8s.io/v1alpha1",
				Kind: "FenceAgentsRemediationTemplate", Name: "missing"},
		}})
		recorder := newWriteRecorder()
		st := s.w.stepper(recorder)
		for range 3 {
			Expect(st.pass(s.key)).To(Succeed())
		}
		rem := s.w.remediation(s.key)
		fenced := conditionOf(rem, s3gwv1alpha1.ConditionFenced)
		Expect(fenced.Reason).To(Equal(s3gwv1alpha1.ReasonInvalidDelegate))
		Expect(fenced.Message).To(ContainSubstring("template FenceAgentsRemediationTemplate " + s.w.ns + "/missing not found"))
		Expect(recorder.Writes()).To(HaveEach(HaveField("Kind", "S3GWRemediation")))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue())
	})
})
