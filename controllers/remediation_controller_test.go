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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

func succeeded(rem *s3gwv1alpha1.S3GWRemediation) bool {
	return meta.IsStatusConditionTrue(rem.Status.Conditions, s3gwv1alpha1.ConditionSucceeded)
}

// completed is Succeeded=True reported for the current failure: one kept for
// NHC from an earlier failure under the same CR has no completion time.
func completed(rem *s3gwv1alpha1.S3GWRemediation) bool {
	return succeeded(rem) && rem.Status.CompletionTime != nil
}

func conditionOf(rem *s3gwv1alpha1.S3GWRemediation, t string) metav1.Condition {
	c := meta.FindStatusCondition(rem.Status.Conditions, t)
	Expect(c).NotTo(BeNil(), "condition %s missing in %+v", t, rem.Status.Conditions)
	return *c
}

func haveCondition(t string, status metav1.ConditionStatus, reason string) OmegaMatcher {
	return ContainElement(And(
		HaveField("Type", t), HaveField("Status", status), HaveField("Reason", reason)))
}

// failedNodeScenario is the common story: node "failed" (NotReady, Longhorn
// reports it down) runs an s3gw gateway whose only replica is on node
// "healthy"; NHC creates the CR from a template with the given spec.
type failedNodeScenario struct {
	w   *world
	g   *gateway
	e   *nhc.Emulator
	key types.NamespacedName
}

func newFailedNodeScenario(spec s3gwv1alpha1.S3GWRemediationSpec, opts ...gatewayOption) *failedNodeScenario {
	// The out-of-service taint is only added on proof that the node is shut
	// down: unless the story says otherwise, a fencer (FAR) reports it.
	fencer := spec.Release.Strategy == s3gwv1alpha1.ReleaseOutOfServiceTaint && len(spec.Fencing.Remediators) == 0
	if fencer {
		spec.Fencing.Remediators = farEvidence()
	}
	w := newWorld(suiteCtx)
	w.addNode("healthy", true)
	w.addNode("failed", true)
	g := w.addGateway("s3gw", "failed", "healthy", opts...)
	w.setReady("failed", false)
	if fencer {
		w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionTrue)
	}
	e := w.nhc(w.template("s3gw", spec, false))
	return &failedNodeScenario{w: w, g: g, e: e, key: w.remediate(e, "failed")}
}

// expectMoved asserts the end state of a successful failover.
func (s *failedNodeScenario) expectMoved() *s3gwv1alpha1.S3GWRemediation {
	w, g := s.w, s.g
	Expect(w.podExists(g.pod)).To(BeFalse(), "the old pod is gone from the API")
	Expect(w.attachments(g, w.nodeName("failed"))).To(BeEmpty(), "no VolumeAttachment left on the failed node")
	Expect(w.attachments(g, w.nodeName("healthy"))).To(HaveLen(1))
	for _, t := range w.tickets(g) {
		Expect(t.NodeID).NotTo(Equal(w.nodeName("failed")), "no Longhorn ticket left for the failed node")
	}
	rem := w.remediation(s.key)
	Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseSucceeded))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationFinished))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingEvidence))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, s3gwv1alpha1.ReasonReleased))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionReplacementReady, metav1.ConditionTrue, s3gwv1alpha1.ReasonReplacementReady))
	Expect(rem.Status.NodeName).To(Equal(w.nodeName("failed")))
	Expect(rem.Status.CompletionTime).NotTo(BeNil())
	Expect(rem.Status.Targets).To(HaveLen(1))
	Expect(rem.Status.Targets[0].State).To(Equal(s3gwv1alpha1.TargetReplaced))
	Expect(rem.Status.Targets[0].Replacement).To(HaveValue(HaveField("NodeName", w.nodeName("healthy"))))
	Expect(rem.Status.Targets[0].Owner).To(HaveValue(Equal(s3gwv1alpha1.WorkloadOwner{
		Kind: "Deployment", Name: g.deployment.Name, ReplicaSet: g.rs.Name})))
	Expect(rem.Finalizers).To(ContainElement(Finalizer))
	Expect(nhc.Succeeded(w.asUnstructured(s.key))).To(Equal(metav1.ConditionTrue), "NHC reads Succeeded=True")
	return rem
}

// recover has NHC see the node healthy again and delete the CR; it returns
// once the operator has cleaned up and the CR is gone.
func (s *failedNodeScenario) recover(st *stepper) {
	s.w.setReady("failed", true)
	remaining, err := s.e.NodeHealthy(s.w.ctx, s.w.nodeName("failed"))
	Expect(err).NotTo(HaveOccurred())
	Expect(remaining).To(Equal(1), "the finalizer holds the CR until the operator cleaned up")
	Expect(st.pass(s.key)).To(Succeed())
	remaining, err = s.e.NodeHealthy(s.w.ctx, s.w.nodeName("failed"))
	Expect(err).NotTo(HaveOccurred())
	Expect(remaining).To(BeZero())
}

var _ = Describe("S3GWRemediation", func() {
	DescribeTable("moves s3gw off a fenced node and cleans up when NHC deletes the CR",
		func(strategy s3gwv1alpha1.ReleaseStrategy, released string) {
			s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
				Release: s3gwv1alpha1.ReleaseSpec{Strategy: strategy}})
			st := s.w.stepper(managerClient)
			st.until(s.key, 20, succeeded)
			rem := s.expectMoved()
			Expect(rem.Status.FencingEvidence).To(ContainElement("StorageIsolation"))
			Expect(st.eventsWithReason("RemediationStarted")).To(HaveLen(1))
			Expect(st.eventsWithReason(remediation.EventPodEvicted)).To(HaveLen(2), "one event on the CR, one on the Node")
			Expect(st.eventsWithReason(released)).To(HaveLen(2))
			Expect(st.eventsWithReason(remediation.EventS3GWMoved)).To(HaveLen(2))
			Expect(st.eventsWithReason("RemediationFinished")).To(HaveLen(1))
			Expect(st.metric("s3gw_remediation_pods_evicted_total", nil)).To(Equal(1.0))
			Expect(st.metric("s3gw_remediation_attachments_released_total", map[string]string{"strategy": string(strategy)})).To(Equal(1.0))
			Expect(st.metric("s3gw_remediation_remediations_total", map[string]string{
				"result": "Succeeded", "reason": s3gwv1alpha1.ReasonRemediationFinished})).To(Equal(1.0))
			Expect(st.metric("s3gw_remediation_phase_duration_seconds", map[string]string{"phase": "Pending"})).To(Equal(1.0))
			phaseSeries := func(phase s3gwv1alpha1.Phase) map[string]string {
				return map[string]string{"namespace": s.key.Namespace, "remediation": s.key.Name,
					"node": s.w.nodeName("failed"), "phase": string(phase)}
			}
			Expect(st.metric("s3gw_remediation_remediation_phase", phaseSeries(s3gwv1alpha1.PhaseSucceeded))).To(Equal(1.0))
			Expect(st.metric("s3gw_remediation_remediation_phase", phaseSeries(s3gwv1alpha1.PhasePending))).To(BeZero(),
				"one series per CR: the phase it is in now")

			failed := s.w.node("failed")
			if strategy == s3gwv1alpha1.ReleaseControllerDetach {
				Expect(failed.Status.VolumesInUse).NotTo(ContainElement(longhorn.UniqueVolumeName(s.g.pv)))
			} else {
				Expect(failed.Status.VolumesInUse).To(ContainElement(longhorn.UniqueVolumeName(s.g.pv)),
					"only ControllerDetach edits the dead kubelet's volumesInUse")
			}
			if strategy == s3gwv1alpha1.ReleaseOutOfServiceTaint {
				Expect(attachments.HasTaint(failed, attachments.OutOfServiceTaint())).To(BeTrue())
				Expect(rem.Status.AddedTaints).To(ConsistOf(HaveField("Key", corev1.TaintNodeOutOfService)))
			} else {
				Expect(attachments.HasTaint(failed, attachments.OutOfServiceTaint())).To(BeFalse())
				Expect(rem.Status.AddedTaints).To(BeEmpty())
			}

			lease, err := s.e.Lease(s.w.ctx, s.w.nodeName("failed"))
			Expect(err).NotTo(HaveOccurred())
			s.recover(st)
			Expect(attachments.HasTaint(s.w.node("failed"), attachments.OutOfServiceTaint())).To(BeFalse(), "the out-of-service taint went with the CR")
			Expect(st.metric("s3gw_remediation_remediation_phase", phaseSeries(s3gwv1alpha1.PhaseSucceeded))).To(BeZero(),
				"the phase series went with the CR")
			Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal("NodeHealthCheck-"+s.e.Name)), "the operator never took NHC's lease")
		},
		Entry("ControllerDetach", s3gwv1alpha1.ReleaseControllerDetach, remediation.EventVolumeUnmarked),
		Entry("DeleteVolumeAttachment", s3gwv1alpha1.ReleaseDeleteVolumeAttachment, remediation.EventAttachmentDeleted),
		Entry("OutOfServiceTaint", s3gwv1alpha1.ReleaseOutOfServiceTaint, remediation.EventOutOfServiceTaint),
	)

	It("reports a missing node and adds no finalizer", func() {
		w := newWorld(suiteCtx)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
		ghost := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName("ghost")}}
		cr, err := e.Remediate(w.ctx, ghost)
		Expect(err).NotTo(HaveOccurred())
		key := types.NamespacedName{Namespace: cr.GetNamespace(), Name: cr.GetName()}

		st := w.stepper(managerClient)
		Expect(st.pass(key)).To(Succeed())
		rem := w.remediation(key)
		Expect(rem.Finalizers).To(BeEmpty())
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseFailed))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, s3gwv1alpha1.ReasonNodeNotFound))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonNodeNotFound))
		Expect(st.eventsWithReason("RemediationCannotStart")).To(ConsistOf(ContainSubstring("Warning")))

		remaining, err := e.NodeDeleted(w.ctx, ghost.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(remaining).To(BeZero(), "without a finalizer NHC's delete completes at once")
	})

	It("does nothing destructive while the node is Ready", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("busy", true)
		g := w.addGateway("s3gw", "busy", "healthy")
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeDisabled}}, false))
		key := w.remediate(e, "busy")

		st := w.stepper(managerClient)
		for range 3 {
			Expect(st.pass(key)).To(Succeed())
		}
		rem := w.remediation(key)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForNodeFailure))
		Expect(conditionOf(rem, s3gwv1alpha1.ConditionFenced).Reason).To(Equal(s3gwv1alpha1.ReasonNodeReady))
		Expect(conditionOf(rem, s3gwv1alpha1.ConditionSucceeded).Status).To(Equal(metav1.ConditionUnknown))
		Expect(rem.Status.Targets).To(BeEmpty())
		Expect(w.podExists(g.pod)).To(BeTrue())
		Expect(w.attachments(g, w.nodeName("busy"))).To(HaveLen(1))
	})

	It("succeeds at once when no s3gw pod runs on the node, touching nothing", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		other := w.addGateway("other-app", "failed", "healthy", withLabels(map[string]string{"app": "other"}))
		w.setReady("failed", false)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
		key := w.remediate(e, "failed")

		st := w.stepper(managerClient)
		Expect(st.pass(key)).To(Succeed())
		rem := w.remediation(key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNoWorkloadOnNode))
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseSucceeded))
		Expect(w.podExists(other.pod)).To(BeTrue())
		Expect(w.attachments(other, w.nodeName("failed"))).To(HaveLen(1))
	})

	It("evicts but leaves RWX and non-Longhorn volumes alone", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		rwx := w.addGateway("rwx", "failed", "healthy", withAccessMode(corev1.ReadWriteMany))
		local := w.addGateway("local", "failed", "healthy", withDriver("local.csi.example.com"))
		w.setReady("failed", false)
		// Storage isolation proves nothing for such volumes; FAR fenced the node.
		far := w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionTrue)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}}, false))
		key := w.remediate(e, "failed")

		st := w.stepper(managerClient)
		st.until(key, 20, succeeded)
		rem := w.remediation(key)
		Expect(rem.Status.Targets).To(HaveLen(2))
		for _, t := range rem.Status.Targets {
			Expect(t.Volumes).To(ConsistOf(HaveField("State", s3gwv1alpha1.VolumeSkipped)))
		}
		Expect(rem.Status.Targets).To(ContainElement(HaveField("Volumes", ContainElement(HaveField("Reason", ContainSubstring("not ReadWriteOnce"))))))
		Expect(rem.Status.Targets).To(ContainElement(HaveField("Volumes", ContainElement(HaveField("Reason", ContainSubstring("not a driver.longhorn.io"))))))
		Expect(st.eventsWithReason(remediation.EventVolumeSkipped)).To(HaveLen(2))
		Expect(w.podExists(rwx.pod)).To(BeFalse())
		Expect(w.podExists(local.pod)).To(BeFalse())
		Expect(w.attachments(rwx, w.nodeName("failed"))).To(HaveLen(1), "a shared volume's attachment is not released")
		Expect(rem.Status.FencingEvidence).To(ConsistOf("FenceAgentsRemediation/" + w.ns + "/" + far.GetName()))
		Expect(w.node("failed").Status.VolumesInUse).To(ContainElement(longhorn.UniqueVolumeName(rwx.pv)))
	})

	It("waits for a healthy replica elsewhere, then fails so NHC can escalate", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{}, withReplicasOn("failed"))
		s.w.taint("failed", attachments.OutOfServiceTaint())
		st := s.w.stepper(managerClient)
		st.until(s.key, 5, isPhase(s3gwv1alpha1.PhaseWaitingForStorage))
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonNoHealthyReplica),
			"a replica may still rebuild: not final yet")

		s.w.clock.Step(s3gwv1alpha1.DefaultReleaseTimeout + time.Second)
		st.until(s.key, 2, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
			return meta.IsStatusConditionFalse(rem.Status.Conditions, s3gwv1alpha1.ConditionSucceeded)
		})
		rem = s.w.remediation(s.key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoHealthyReplica))
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseFailed))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(), "nothing is evicted when releasing cannot help")
		Expect(s.w.attachments(s.g, s.w.nodeName("failed"))).To(HaveLen(1))
		Expect(st.eventsWithReason(remediation.EventNoHealthyReplica)).To(And(HaveLen(2), HaveEach(ContainSubstring(s.g.pv))),
			"one Warning when it starts waiting, one when it fails")
	})
})

// guard keeps unused imports honest while stories grow.
var _ = apierrors.IsNotFound
var _ = ptr.To[int]
