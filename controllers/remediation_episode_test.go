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
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// closedGate runs passes and checks that the gate held: the remediation
// waits for fencing, the Fenced message says why, and only the CR was
// written. It returns the stepper for further checks.
func closedGate(s *failedNodeScenario, why ...string) *stepper {
	recorder := newWriteRecorder()
	st := s.w.stepper(recorder)
	for range 5 {
		Expect(st.pass(s.key)).To(Succeed())
	}
	rem := s.w.remediation(s.key)
	Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
	fenced := conditionOf(rem, s3gwv1alpha1.ConditionFenced)
	Expect(fenced.Status).To(Equal(metav1.ConditionFalse))
	for _, w := range why {
		Expect(fenced.Message).To(ContainSubstring(w))
	}
	Expect(s.w.podExists(s.g.pod)).To(BeTrue())
	Expect(s.w.attachments(s.g, s.w.nodeName("failed"))).To(HaveLen(1))
	Expect(conditionOf(rem, s3gwv1alpha1.ConditionSucceeded).Status).To(Equal(metav1.ConditionUnknown))
	Expect(rem.Status.Targets).To(HaveLen(1), "targets are recorded before the gate")
	Expect(recorder.Writes()).To(HaveEach(HaveField("Kind", "S3GWRemediation")),
		"behind a closed gate only the CR's finalizer and status are written")
	return st
}

var _ = Describe("Evidence of the current failure", func() {
	It("holds when a second node with a replica is lost together with s3gw's node", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		w.addNode("rackmate", true)
		g := w.addGateway("s3gw", "failed", "healthy", withReplicasOn("healthy", "rackmate"))
		w.setReady("failed", false)
		w.setReady("rackmate", false)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
		s := &failedNodeScenario{w: w, g: g, e: e, key: w.remediate(e, "failed")}

		closedGate(s, "storage isolation: replica "+g.pv+"-r-1 of "+g.pv+" is on node "+w.nodeName("rackmate")+
			", which longhorn-manager cannot reach (Longhorn Node Ready=False (KubernetesNodeNotReady))")

		// The rack mate comes back: longhorn-manager can stop its replica again.
		w.setReady("rackmate", true)
		st := w.stepper(managerClient)
		st.until(s.key, 20, succeeded)
		Expect(s.expectMoved().Status.FencingEvidence).To(ConsistOf("StorageIsolation"))
	})

	It("holds while a replica's node is fenced itself, whatever its Lease says, and moves once that node is back", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		w.addNode("rackmate", true)
		g := w.addGateway("s3gw", "failed", "healthy", withReplicasOn("healthy", "rackmate"))
		w.setReady("failed", false)
		// A fencer took the rack mate down too: Longhorn and its Lease still
		// look alive, but its replica can no longer be stopped.
		oos := attachments.OutOfServiceTaint()
		w.taint("rackmate", oos)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
		s := &failedNodeScenario{w: w, g: g, e: e, key: w.remediate(e, "failed")}

		closedGate(s, "storage isolation: replica "+g.pv+"-r-1 of "+g.pv+" is on node "+w.nodeName("rackmate")+
			", which longhorn-manager cannot reach (fenced by node.kubernetes.io/out-of-service)")

		w.untaint("rackmate", oos)
		st := w.stepper(managerClient)
		st.until(s.key, 20, succeeded)
		Expect(s.expectMoved().Status.FencingEvidence).To(ConsistOf("StorageIsolation"))
	})

	It("ignores a fence agent's success from an earlier failure, whatever its lastTransitionTime says, and counts a new one", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		g := w.addGateway("s3gw", "failed", "healthy", noStorageIsolation)
		// An earlier incident's FAR, left behind, whose clock runs ahead:
		// its success claims to be from the future.
		far := w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionFalse)
		w.setConditionAt(far, "FenceAgentActionSucceeded", metav1.ConditionTrue, w.clock.Now().Add(time.Hour))
		// The node recovered and fails again minutes later.
		w.clock.Step(10 * time.Minute)
		w.setReady("failed", false)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}}, false))
		s := &failedNodeScenario{w: w, g: g, e: e, key: w.remediate(e, "failed")}

		closedGate(s, "FenceAgentActionSucceeded=True is not known to be from this failure")
		Expect(s.w.remediation(s.key).Status.Memory.EvidenceSightings).To(ContainElement(
			HaveField("Name", "FenceAgentsRemediation/"+w.ns+"/"+w.nodeName("failed"))))

		// FAR fences anew: the controller sees it pending, then succeeded.
		st := s.w.stepper(managerClient)
		s.w.setCondition(far, "FenceAgentActionSucceeded", metav1.ConditionFalse)
		Expect(st.pass(s.key)).To(Succeed())
		s.w.setConditionAt(far, "FenceAgentActionSucceeded", metav1.ConditionTrue, w.clock.Now().Add(-time.Hour))
		st.until(s.key, 20, succeeded)
		s.expectMoved()
	})

	It("ignores an out-of-service taint it never saw appear, whatever its timeAdded says, and counts one it saw appear", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{}, noStorageIsolation)
		old := attachments.OutOfServiceTaint()
		old.TimeAdded = ptr.To(metav1.NewTime(s.w.clock.Now().Add(time.Hour)))
		s.w.taint("failed", old)

		closedGate(s, "the node.kubernetes.io/out-of-service taint is not known to be from this failure")

		// The admin removes it and adds it again: the controller saw the
		// node without it since the kubelet's last sign of life.
		s.w.untaint("failed", old)
		st := s.w.stepper(managerClient)
		Expect(st.pass(s.key)).To(Succeed())
		old.TimeAdded = ptr.To(metav1.NewTime(s.w.clock.Now().Add(-time.Hour)))
		s.w.taint("failed", old)
		st.until(s.key, 20, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
			return meta.IsStatusConditionTrue(rem.Status.Conditions, s3gwv1alpha1.ConditionFenced)
		})
	})

	It("leaves a live kubelet's pods and volumesInUse alone with ControllerDetach", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
		// The kubelet is alive: it reports Ready=False itself and renews its
		// Lease; Longhorn reports the node down all the same.
		node := s.w.node("failed")
		node.Status.Conditions[0].Status = corev1.ConditionFalse
		Expect(s.w.c.Status().Update(s.w.ctx, node)).To(Succeed())
		s.w.renewLease("failed", s.w.clock.Now())
		st := s.w.stepper(managerClient)
		st.until(s.key, 10, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
			return rem.Status.Phase == s3gwv1alpha1.PhaseEvicting
		})
		for range 3 {
			s.w.renewLease("failed", s.w.clock.Now())
			Expect(st.pass(s.key)).To(Succeed())
		}
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse, s3gwv1alpha1.ReasonKubeletAlive))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(),
			"deleting the pod would start the attach-detach controller's 6-minute force detach")
		Expect(s.w.node("failed").Status.VolumesInUse).To(ContainElement(longhorn.UniqueVolumeName(s.g.pv)),
			"a live kubelet's list is its own")

		// The live kubelet stops the pod and unmounts its volume (after the
		// taint eviction); the attach-detach controller then detaches
		// through its normal path.
		node = s.w.node("failed")
		node.Status.VolumesInUse = nil
		Expect(s.w.c.Status().Update(s.w.ctx, node)).To(Succeed())
		st.until(s.key, 20, succeeded)
		s.expectMoved()
	})

	It("releases with ControllerDetach at its first sight of the node when the control plane's clocks tell the kubelet silent, "+
		"and waits a Lease duration on its own clock without them", func() {
		for _, stamped := range []bool{true, false} {
			w := newWorld(suiteCtx)
			w.addNode("healthy", true)
			w.addNode("failed", true)
			g := w.addGateway("s3gw", "failed", "healthy")
			// The kubelet's last renewal is the one kube-apiserver stores
			// now, on its (real) clock; kube-controller-manager, on the
			// story's clock, marks the node Unknown 50 s after it.
			w.clock.Step(killedAgo)
			w.setReady("failed", false)
			e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
			s := &failedNodeScenario{w: w, g: g, e: e, key: w.remediate(e, "failed")}
			if !stamped {
				// An API server or a cache that strips managedFields: the
				// Lease carries no write time (a reset, as the API server
				// reads one empty entry).
				lease := &coordinationv1.Lease{}
				Expect(s.w.c.Get(s.w.ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: s.w.nodeName("failed")}, lease)).To(Succeed())
				lease.ManagedFields = []metav1.ManagedFieldsEntry{{}}
				Expect(s.w.c.Update(s.w.ctx, lease)).To(Succeed())
				Expect(lease.ManagedFields).To(BeEmpty())
			}
			// A controller that never watched the node (just started): its
			// first reading of the heartbeat is now, on its own clock.
			s.w.firstSawHeartbeat(s.key, "failed")
			st := s.w.stepper(managerClient)
			if stamped {
				// kube-controller-manager marked the node Unknown 50 s after
				// kube-apiserver stored the last renewal: silent at once.
				st.until(s.key, 10, succeeded)
				s.expectMoved()
				continue
			}
			st.until(s.key, 10, isPhase(s3gwv1alpha1.PhaseEvicting))
			for range 3 {
				Expect(st.pass(s.key)).To(Succeed())
			}
			rem := s.w.remediation(s.key)
			Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse, s3gwv1alpha1.ReasonKubeletAlive))
			Expect(s.w.podExists(s.g.pod)).To(BeTrue())
			s.w.clock.Step(41 * time.Second)
			st.until(s.key, 10, succeeded)
			s.expectMoved()
		}
	})

	It("does not force-delete a pod finalizers would hold while only storage isolation holds", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
		pod := &corev1.Pod{}
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.g.pod), pod)).To(Succeed())
		pod.Finalizers = append(pod.Finalizers, "example.com/hold")
		Expect(s.w.c.Update(s.w.ctx, pod)).To(Succeed())
		st := s.w.stepper(managerClient)
		st.until(s.key, 10, isPhase(s3gwv1alpha1.PhaseEvicting))
		for range 3 {
			Expect(st.pass(s.key)).To(Succeed())
		}
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonPodFinalizers))
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.g.pod), pod)).To(Succeed())
		Expect(pod.DeletionTimestamp).To(BeNil(),
			"once its finalizers went, the attach-detach controller would force-detach the volume 6 minutes later, unchecked")

		pod.Finalizers = nil
		Expect(s.w.c.Update(s.w.ctx, pod)).To(Succeed())
		st.until(s.key, 20, succeeded)
		s.expectMoved()
	})

	It("releases nothing while the force-deleted pod is still held by a finalizer", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{}, noStorageIsolation)
		s.w.taint("failed", attachments.OutOfServiceTaint())
		pod := &corev1.Pod{}
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.g.pod), pod)).To(Succeed())
		pod.Finalizers = append(pod.Finalizers, "example.com/hold")
		Expect(s.w.c.Update(s.w.ctx, pod)).To(Succeed())
		st := s.w.stepper(managerClient)
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool {
			p := &corev1.Pod{}
			return s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.g.pod), p) == nil && p.DeletionTimestamp != nil
		})
		for range 3 {
			Expect(st.pass(s.key)).To(Succeed())
		}
		Expect(s.w.remediation(s.key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseEvicting))
		Expect(s.w.node("failed").Status.VolumesInUse).To(ContainElement(longhorn.UniqueVolumeName(s.g.pv)))
		Expect(s.w.attachments(s.g, s.w.nodeName("failed"))).To(HaveLen(1))

		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.g.pod), pod)).To(Succeed())
		pod.Finalizers = nil
		Expect(s.w.c.Update(s.w.ctx, pod)).To(Succeed())
		st.until(s.key, 20, succeeded)
		s.expectMoved()
	})

	It("never removes an out-of-service taint a fencer added in the same second ours would be", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}})
		st := s.w.stepper(managerClient)
		st.until(s.key, 10, isPhase(s3gwv1alpha1.PhaseEvicting))
		// The fencer adds its own taint, stamped this very second, before
		// our pass that would have added ours.
		theirs := attachments.OutOfServiceTaint()
		theirs.TimeAdded = ptr.To(metav1.NewTime(s.w.clock.Now()))
		s.w.taint("failed", theirs)
		st.until(s.key, 20, succeeded)
		s.expectMoved()
		Expect(s.w.remediation(s.key).Status.AddedTaints).To(BeEmpty(), "ours was never added")

		s.recover(st)
		kept := attachments.FindTaint(s.w.node("failed"), attachments.OutOfServiceTaint())
		Expect(kept).NotTo(BeNil(), "the fencer's taint stays")
		Expect(kept.TimeAdded.Unix()).To(Equal(theirs.TimeAdded.Unix()))
	})

	It("holds a fenced node's release while a replica on it may have writes the others lack", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}}, withReplicasOn("failed", "healthy"))
		far := s.w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionFalse)
		s.w.clock.Step(time.Second)
		s.w.setCondition(far, "FenceAgentActionSucceeded", metav1.ConditionTrue)
		recorder := newWriteRecorder()
		st := s.w.stepper(recorder)
		st.until(s.key, 10, isPhase(s3gwv1alpha1.PhaseWaitingForStorage))
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonReplicasUnreachable))
		Expect(conditionOf(rem, s3gwv1alpha1.ConditionSucceeded).Message).To(ContainSubstring(
			"replica " + s.g.pv + "-r-0 of " + s.g.pv + " is on the failed node"))
		Expect(recorder.Writes()).To(HaveEach(HaveField("Kind", "S3GWRemediation")), "fenced, yet nothing moves")

		s.w.clock.Step(s3gwv1alpha1.DefaultReleaseTimeout + time.Second)
		s.w.kubelets()
		Expect(st.pass(s.key)).To(Succeed())
		Expect(s.w.remediation(s.key).Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded,
			metav1.ConditionFalse, s3gwv1alpha1.ReasonReplicasUnreachable), "NHC may escalate, e.g. to a reboot")
		Expect(s.w.podExists(s.g.pod)).To(BeTrue())
	})

	It("releases a fenced node's volume with a replica on it when told to accept that", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()},
			Release: s3gwv1alpha1.ReleaseSpec{RequireReachableReplicas: ptr.To(false)}}, withReplicasOn("failed", "healthy"))
		far := s.w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionFalse)
		s.w.clock.Step(time.Second)
		s.w.setCondition(far, "FenceAgentActionSucceeded", metav1.ConditionTrue)
		s.w.stepper(managerClient).until(s.key, 20, succeeded)
		s.expectMoved()
	})

	It("never releases a volume whose revision counter is disabled, fenced or not, unless told to accept stale reads", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}}, revisionCounterDisabled)
		s.w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionTrue)
		recorder := newWriteRecorder()
		st := s.w.stepper(recorder)
		st.until(s.key, 10, isPhase(s3gwv1alpha1.PhaseFailed))
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse,
			s3gwv1alpha1.ReasonRevisionCounterDisabled), "failed at once, so NHC escalates")
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse,
			s3gwv1alpha1.ReasonRevisionCounterDisabled))
		Expect(conditionOf(rem, s3gwv1alpha1.ConditionSucceeded).Message).To(ContainSubstring(
			"Longhorn volume " + s.g.pv + " has the revision counter disabled"))
		Expect(st.eventsWithReason(remediation.EventRevisionCounterOff)).NotTo(BeEmpty())
		Expect(recorder.Writes()).To(HaveEach(HaveField("Kind", "S3GWRemediation")), "fenced, yet nothing moves")
		Expect(s.w.podExists(s.g.pod)).To(BeTrue())

		// The template accepts the risk: NHC's next remediation moves s3gw.
		accepting := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()},
			Release: s3gwv1alpha1.ReleaseSpec{AcceptStaleReadsWithoutRevisionCounter: true}}, revisionCounterDisabled)
		far := accepting.w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionFalse)
		accepting.w.clock.Step(time.Second)
		accepting.w.setCondition(far, "FenceAgentActionSucceeded", metav1.ConditionTrue)
		accepting.w.stepper(managerClient).until(accepting.key, 20, succeeded)
		accepting.expectMoved()
	})

	It("starts over when the node fails again while NHC keeps the CR, with a new delegate", func() {
		s, _ := newDelegateScenario(true)
		w := s.w
		st := w.stepper(managerClient)
		first := s.fenceByDelegate(st)
		st.until(s.key, 20, succeeded)
		s.expectMoved()
		episode := w.remediation(s.key).Status.Memory.Episode
		Expect(episode).NotTo(BeNil())

		// The node comes back; NHC keeps the CR (healthyDelay). s3gw is
		// scheduled back onto it, and it fails again.
		w.setReady("failed", true)
		Expect(st.pass(s.key)).To(Succeed())
		Expect(w.remediation(s.key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseSucceeded), "kept while the node is Ready")
		w.clock.Step(5 * time.Minute)
		back := w.addGateway("back", "failed", "healthy", noStorageIsolation)
		w.setReady("failed", false)

		// One Reconcile: the pass that starts over records the new failure,
		// and the passes it chains record the new target and wait for
		// fencing anew.
		Expect(st.pass(s.key)).To(Succeed())
		rem := w.remediation(s.key)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain),
			"kept for NHC, which times out a CR that is not Succeeded")
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonWaitingForFencing))
		Expect(rem.Status.CompletionTime).To(BeNil())
		Expect(rem.Status.Targets).To(ConsistOf(HaveField("Name", back.pod.Name)), "the old failure's target is forgotten")
		Expect(rem.Status.Memory.Episode).NotTo(Equal(episode))
		Expect(rem.Status.Memory.Episode.RecoveredAt).NotTo(BeNil(), "the controller saw the node Ready in between")

		// The controller saw the kubelet's last renewal change with this
		// failure, yet need not wait a Lease duration on its own clock:
		// kube-controller-manager marked the node Unknown 50 s after
		// kube-apiserver stored that renewal.

		// The old delegate's success is stale: it is replaced by a new one
		// that fences this failure.
		second := s.fenceByDelegate(st)
		Expect(second.GetUID()).NotTo(Equal(first.GetUID()))
		Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(first), first)).NotTo(Succeed(), "the stale delegate was deleted")
		// The new delegate counts for this failure because the controller
		// created it after the heartbeat it last saw (its own sighting),
		// not by its creationTimestamp: kube-controller-manager's Unknown
		// transition here runs on the fake clock, minutes ahead of the API
		// server's.
		st.until(s.key, 20, completed)
		rem = w.remediation(s.key)
		Expect(rem.Status.Targets).To(ConsistOf(HaveField("Name", back.pod.Name)))
		Expect(w.podExists(back.pod)).To(BeFalse())
		Expect(st.eventsWithReason("RemediationStarted")).To(HaveLen(1), "the finalizer is added once")
	})
})

var _ = Describe("The delegate, as NHC sees it", func() {
	It("reuses a fencing CR NHC already created for this failure instead of fencing twice", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		g := w.addGateway("s3gw", "failed", "healthy", noStorageIsolation)
		w.setReady("failed", false)
		spec := w.delegateSpec(false)
		// NHC's own FAR step for the node, as NHC names and annotates it.
		theirs := w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionFalse)
		e := w.nhc(w.template("s3gw", spec, false))
		s := &failedNodeScenario{w: w, g: g, e: e, key: w.remediate(e, "failed")}
		st := w.stepper(managerClient)
		st.until(s.key, 5, isPhase(s3gwv1alpha1.PhaseWaitingForFencing))
		Expect(conditionOf(w.remediation(s.key), s3gwv1alpha1.ConditionFenced).Message).To(ContainSubstring(
			"reused FenceAgentsRemediation/" + w.ns + "/" + w.nodeName("failed") + " has no FenceAgentActionSucceeded=True"))

		w.clock.Step(time.Second)
		w.setCondition(theirs, "FenceAgentActionSucceeded", metav1.ConditionTrue)
		st.until(s.key, 20, succeeded)
		Expect(s.expectMoved().Status.FencingEvidence).To(ConsistOf(
			"reused FenceAgentsRemediation/" + w.ns + "/" + w.nodeName("failed")))
		Expect(w.delegateOf(s.key)).To(BeNil(), "no second fencing CR")
		Expect(st.eventsWithReason(remediation.EventDelegateCreated)).To(BeEmpty())
	})

	It("passes NHC's time-out on to its delegate", func() {
		s, _ := newDelegateScenario(true)
		w, e := s.w, s.e
		st := w.stepper(managerClient)
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool { return w.delegateOf(s.key) != nil })

		Expect(e.TimeOut(w.ctx, w.asUnstructured(s.key))).To(Succeed())
		Expect(st.pass(s.key)).To(Succeed())
		timedOut := w.asUnstructured(s.key).GetAnnotations()["remediation.medik8s.io/nhc-timed-out"]
		Expect(timedOut).NotTo(BeEmpty())
		Expect(w.delegateOf(s.key).GetAnnotations()).To(HaveKeyWithValue("remediation.medik8s.io/nhc-timed-out", timedOut))
		Expect(w.remediation(s.key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseStopped))
		s.recover(st)
	})
})

// fenceByDelegate waits for the delegate CR of the current failure to be
// created, then reports it fenced now.
func (s *failedNodeScenario) fenceByDelegate(st *stepper) *unstructured.Unstructured {
	var far *unstructured.Unstructured
	st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool {
		far = s.w.delegateOf(s.key)
		return far != nil && far.GetDeletionTimestamp() == nil && !fenced(far)
	})
	s.w.clock.Step(time.Second)
	s.w.setCondition(far, "FenceAgentActionSucceeded", metav1.ConditionTrue)
	return far
}

func fenced(far *unstructured.Unstructured) bool {
	ok := fencing.ConditionTrue(far, "FenceAgentActionSucceeded")
	return ok
}

// delegateOf returns the FenceAgentsRemediation that carries the
// remediation's marker, in any namespace, or nil.
func (w *world) delegateOf(key client.ObjectKey) *unstructured.Unstructured {
	rem := w.remediation(key)
	fars := &unstructured.UnstructuredList{}
	fars.SetAPIVersion("fence-agents-remediation.medik8s.io/v1alpha1")
	fars.SetKind("FenceAgentsRemediationList")
	Expect(w.c.List(w.ctx, fars, client.MatchingLabels{fencing.RemediationUIDLabel: string(rem.UID)})).To(Succeed())
	Expect(len(fars.Items)).To(BeNumerically("<=", 1), "one delegate per remediation")
	if len(fars.Items) == 0 {
		return nil
	}
	return &fars.Items[0]
}

// fencersFor returns the FenceAgentsRemediations for the node, in every
// namespace, whoever created them.
func (w *world) fencersFor(short string) []unstructured.Unstructured {
	fars := &unstructured.UnstructuredList{}
	fars.SetAPIVersion("fence-agents-remediation.medik8s.io/v1alpha1")
	fars.SetKind("FenceAgentsRemediationList")
	Expect(w.c.List(w.ctx, fars)).To(Succeed())
	var out []unstructured.Unstructured
	for _, far := range fars.Items {
		if far.GetAnnotations()["remediation.medik8s.io/node-name"] == w.nodeName(short) {
			out = append(out, far)
		}
	}
	return out
}
