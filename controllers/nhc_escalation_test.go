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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// These stories run the real controller step by step against the NHC
// emulator's passes; NHC's clock is fake, so its 300 s unhealthy duration
// and step timeouts pass in an instant.

const (
	farAPIVersion = "fence-agents-remediation.medik8s.io/v1alpha1"
	farKind       = "FenceAgentsRemediation"
)

// escalation is a NodeHealthCheck scenario: node "failed" runs an s3gw
// gateway, node "healthy" takes the replacement.
type escalation struct {
	w  *world
	g  *gateway
	e  *nhc.Emulator
	st *stepper
}

func newEscalation(spec func(*escalation, *nhc.Emulator), opts ...gatewayOption) *escalation {
	s := &escalation{w: newWorld(suiteCtx)}
	s.w.addNode("healthy", true)
	s.w.addNode("failed", true)
	s.g = s.w.addGateway("s3gw", "failed", "healthy", opts...)
	s.e = s.w.nodeHealthCheck("nhc", func(e *nhc.Emulator) {
		e.MinHealthy = ptr.To(intstr.FromInt32(0))
		spec(s, e)
	})
	s.st = s.w.stepper(managerClient)
	return s
}

// fail takes node "failed" down for NHC's unhealthy duration, on the
// story's one clock.
func (s *escalation) fail() {
	s.w.setReady("failed", false)
	s.w.clock.Step(nhc.DefaultUnhealthyDuration + time.Second)
}

// pass runs one NHC pass, which must succeed.
func (s *escalation) pass() {
	_, err := s.e.Reconcile(s.w.ctx)
	Expect(err).NotTo(HaveOccurred())
}

// crs lists NHC's CRs for node "failed" of one kind.
func (s *escalation) crs(kind string) []unstructured.Unstructured {
	all, err := s.e.ForNode(s.w.ctx, s.w.nodeName("failed"))
	Expect(err).NotTo(HaveOccurred())
	var out []unstructured.Unstructured
	for _, cr := range all {
		if cr.GetKind() == kind {
			out = append(out, cr)
		}
	}
	return out
}

// crFrom is NHC's S3GWRemediation for node "failed" from the template.
func (s *escalation) crFrom(template *s3gwv1alpha1.S3GWRemediationTemplate) types.NamespacedName {
	for _, cr := range s.crs("S3GWRemediation") {
		if cr.GetAnnotations()[nhc.TemplateNameAnnotation] == template.Name {
			return client.ObjectKeyFromObject(&cr)
		}
	}
	Fail("no S3GWRemediation from template " + template.Name)
	return types.NamespacedName{}
}

func (s *escalation) onlyCR(kind string) *unstructured.Unstructured {
	crs := s.crs(kind)
	Expect(crs).To(HaveLen(1), "one %s for the failed node", kind)
	return &crs[0]
}

// recover brings node "failed" back and has NHC and the controller clean up
// the given CRs of ours: NHC deletes every CR, the operator lets ours go,
// and NHC then invalidates the lease.
func (s *escalation) recover(ours ...types.NamespacedName) {
	s.w.setReady("failed", true)
	s.pass()
	for _, key := range ours {
		Expect(s.st.pass(key)).To(Succeed())
	}
	s.pass()
	all, err := s.e.ForNode(s.w.ctx, s.w.nodeName("failed"))
	Expect(err).NotTo(HaveOccurred())
	Expect(all).To(BeEmpty(), "NHC deleted every CR and the operator released its finalizers")
	_, err = s.e.Lease(s.w.ctx, s.w.nodeName("failed"))
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	Expect(err).To(HaveOccurred(), "NHC invalidated the lease once the last CR was gone")
	Expect(s.e.Remediating()).To(BeFalse())
}

// fenceAgent plays fence-agents-remediation on a FenceAgentsRemediation:
// the agent powers the node off, the ResourceDeletion strategy deletes the
// node's pods, and the CR reports success. The world's doubles then react
// (the ReplicaSet controller schedules the replacement, which waits for the
// volume), as they would long before NHC's next step.
func (s *escalation) fenceAgent(far *unstructured.Unstructured) {
	defer s.w.simulate()
	w := s.w
	node := far.GetAnnotations()[annotations.NodeNameAnnotation]
	pods := &corev1.PodList{}
	Expect(w.c.List(w.ctx, pods, client.InNamespace(w.ns))).To(Succeed())
	for i := range pods.Items {
		if pods.Items[i].Spec.NodeName == node {
			Expect(w.c.Delete(w.ctx, &pods.Items[i], client.GracePeriodSeconds(0))).To(Succeed())
		}
	}
	w.farConditions(far, metav1.ConditionTrue, "RemediationFinishedSuccessfully", "")
}

// farGivesUp plays FAR once its agent failed every attempt (FAR's
// UpdateConditions with FenceAgentFailed): Processing,
// FenceAgentActionSucceeded and Succeeded False, never to be retried.
func (w *world) farGivesUp(far *unstructured.Unstructured) {
	w.farConditions(far, metav1.ConditionFalse, "FenceAgentFailed", "Fence agent command has failed")
}

// farConditions sets a FenceAgentsRemediation's conditions as FAR leaves
// them at the end: Processing False, FenceAgentActionSucceeded and
// Succeeded with the outcome, now.
func (w *world) farConditions(far *unstructured.Unstructured, outcome metav1.ConditionStatus, reason, message string) {
	Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(far), far)).To(Succeed())
	now := w.clock.Now().UTC().Format(time.RFC3339)
	condition := func(t string, status metav1.ConditionStatus) any {
		return map[string]any{"type": t, "status": string(status), "reason": reason, "message": message, "lastTransitionTime": now}
	}
	Expect(unstructured.SetNestedSlice(far.Object, []any{
		condition("Processing", metav1.ConditionFalse),
		condition("FenceAgentActionSucceeded", outcome),
		condition("Succeeded", outcome),
	}, "status", "conditions")).To(Succeed())
	Expect(w.c.Status().Update(w.ctx, far)).To(Succeed())
}

// farTemplate creates a FenceAgentsRemediationTemplate in the scenario.
func (w *world) farTemplate(name string) nhc.TemplateRef {
	t := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"agent": "fence_ipmilan", "remediationStrategy": "ResourceDeletion"}}}}}
	t.SetAPIVersion(farAPIVersion)
	t.SetKind(farKind + "Template")
	t.SetNamespace(w.ns)
	t.SetName(name)
	Expect(w.c.Create(w.ctx, t)).To(Succeed())
	return nhc.TemplateRef{APIVersion: farAPIVersion, Kind: farKind + "Template", Namespace: w.ns, Name: name}
}

// failTwiceUnderKeptCR has node "failed" fail and our step move s3gw off
// it; the node comes back and NHC keeps the CR (healthyDelay), while kept
// runs; a second gateway lands on the node, where Longhorn cannot tell the
// node down, so its move needs other evidence; and the node fails again 40
// minutes after NHC took its lease, which is then overdue (acquireTime + 3
// × the timeout). It returns once the remediation waits for fencing.
func (s *escalation) failTwiceUnderKeptCR(kept func()) (types.NamespacedName, *gateway) {
	s.fail()
	s.pass()
	key := client.ObjectKeyFromObject(s.onlyCR("S3GWRemediation"))
	s.st.until(key, 20, succeeded)
	s.expectReleasedOnto(key, "StorageIsolation")

	s.w.setReady("failed", true)
	s.w.clock.Step(time.Minute)
	s.pass()
	Expect(s.st.pass(key)).To(Succeed())
	if kept != nil {
		kept()
	}
	second := s.w.addGateway("second", "failed", "healthy", noStorageIsolation)

	s.w.clock.Step(40 * time.Minute)
	s.w.setReady("failed", false)
	s.st.until(key, 10, isPhase(s3gwv1alpha1.PhaseWaitingForFencing))
	return key, second
}

func (s *escalation) expectReleasedOnto(key types.NamespacedName, evidence string) {
	w, g := s.w, s.g
	rem := w.remediation(key)
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished))
	Expect(rem.Status.FencingEvidence).To(ContainElement(evidence))
	Expect(w.podExists(g.pod)).To(BeFalse())
	Expect(w.attachments(g, w.nodeName("failed"))).To(BeEmpty(), "the failed node's attachment is released")
	Expect(w.attachments(g, w.nodeName("healthy"))).To(HaveLen(1), "the replacement's volume is attached")
}

var _ = Describe("Escalation with NodeHealthCheck", func() {
	It("FAR → s3gw: FAR fences, then our step releases the volume at once", func() {
		s := newEscalation(func(s *escalation, e *nhc.Emulator) {
			fastRelease := s.w.template("fast-release", s3gwv1alpha1.S3GWRemediationSpec{
				Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}}, false)
			e.Escalation = []nhc.Step{
				{Template: s.w.farTemplate("fence"), Order: 0, Timeout: 2 * time.Minute},
				{Template: templateRef(fastRelease), Order: 1, Timeout: 5 * time.Minute},
			}
		}, noStorageIsolation)
		s.fail()
		s.pass()
		far := s.onlyCR(farKind)
		Expect(far.GetName()).To(Equal(s.w.nodeName("failed")))
		s.fenceAgent(far)

		// FAR succeeded, but NHC moves on only when FAR's step times out.
		s.pass()
		Expect(s.crs("S3GWRemediation")).To(BeEmpty(), "the next step waits for the FAR step's timeout")
		s.w.clock.Step(2*time.Minute + time.Second)
		s.pass()
		s.w.clock.Step(time.Second)
		s.pass()
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(far), far)).To(Succeed())
		Expect(far.GetAnnotations()).NotTo(HaveKey(annotations.NhcTimedOut), "a Succeeded CR is not marked timed out")
		key := client.ObjectKeyFromObject(s.onlyCR("S3GWRemediation"))

		s.st.until(key, 20, succeeded)
		s.expectReleasedOnto(key, farKind+"/"+s.w.ns+"/"+far.GetName())
		s.recover(key)
	})

	It("s3gw with a FAR delegate → s3gw: the delegate's fence fails, our step fails at once and NHC moves on", func() {
		var fenced, lenient *s3gwv1alpha1.S3GWRemediationTemplate
		s := newEscalation(func(s *escalation, e *nhc.Emulator) {
			fenced = s.w.template("fenced", s.w.delegateSpec(true), true) // the delegate is its only evidence
			lenient = s.w.template("lenient", s3gwv1alpha1.S3GWRemediationSpec{}, true)
			e.Escalation = []nhc.Step{
				{Template: templateRef(fenced), Order: 0, Timeout: 5 * time.Minute},
				{Template: templateRef(lenient), Order: 1, Timeout: 5 * time.Minute},
			}
		})
		s.fail()
		s.pass()
		firstKey := client.ObjectKeyFromObject(s.onlyCR("S3GWRemediation"))
		s.st.until(firstKey, 10, func(*s3gwv1alpha1.S3GWRemediation) bool { return s.w.delegateOf(firstKey) != nil })
		far := s.w.delegateOf(firstKey)
		s.w.clock.Step(time.Second)
		s.w.farGivesUp(far)

		Expect(s.st.pass(firstKey)).To(Succeed())
		rem := s.w.remediation(firstKey)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseFailed))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonDelegateFailed))
		msg := "delegate FenceAgentsRemediation/" + far.GetNamespace() + "/" + far.GetName() +
			" failed (FenceAgentFailed: Fence agent command has failed); no other evidence source can still prove node " +
			s.w.nodeName("failed") + " fenced"
		Expect(conditionOf(rem, s3gwv1alpha1.ConditionSucceeded).Message).To(Equal(msg))
		Expect(s.st.eventsWithReason(remediation.EventDelegateFailed)).To(ConsistOf(ContainSubstring(msg)))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(), "a failed fence moves nothing")
		Expect(s.w.fencersFor("failed")).To(HaveLen(1), "never a second fence for this failure")

		// NHC moves on at once, 4 minutes before the step's timeout.
		s.w.clock.Step(time.Second)
		s.pass()
		Expect(s.w.asUnstructured(firstKey).GetAnnotations()).To(HaveKey(annotations.NhcTimedOut))
		s.w.clock.Step(time.Second)
		s.pass()
		Expect(s.crs("S3GWRemediation")).To(HaveLen(2))
		secondKey := s.crFrom(lenient)
		Expect(s.st.pass(firstKey)).To(Succeed())
		Expect(s.w.remediation(firstKey).Status.Phase).To(Equal(s3gwv1alpha1.PhaseStopped))

		s.st.until(secondKey, 20, succeeded)
		s.expectReleasedOnto(secondKey, "StorageIsolation")
		Expect(s.st.eventsWithReason(remediation.EventDelegateFailed)).To(HaveLen(1), "told once")
		s.recover(firstKey, secondKey)
	})

	It("s3gw → FAR: without evidence our step times out, FAR fences, the node comes back", func() {
		var fastRelease *s3gwv1alpha1.S3GWRemediationTemplate
		s := newEscalation(func(s *escalation, e *nhc.Emulator) {
			fastRelease = s.w.template("fast-release", s3gwv1alpha1.S3GWRemediationSpec{}, false)
			e.Escalation = []nhc.Step{
				{Template: templateRef(fastRelease), Order: 0, Timeout: 3 * time.Minute},
				{Template: s.w.farTemplate("fence"), Order: 1, Timeout: 5 * time.Minute},
			}
		}, withReplicasOn("failed", "healthy"))
		s.fail()
		s.pass()
		key := client.ObjectKeyFromObject(s.onlyCR("S3GWRemediation"))
		for range 3 {
			Expect(s.st.pass(key)).To(Succeed())
		}
		Expect(s.w.remediation(key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))

		s.w.clock.Step(3*time.Minute + time.Second)
		s.pass()
		Expect(s.w.asUnstructured(key).GetAnnotations()).To(HaveKey(annotations.NhcTimedOut))
		Expect(s.st.pass(key)).To(Succeed())
		rem := s.w.remediation(key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonRemediationStoppedByNHC))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(), "our step touched nothing")

		s.w.clock.Step(time.Second)
		s.pass()
		far := s.onlyCR(farKind)
		s.fenceAgent(far)
		Expect(s.st.pass(key)).To(Succeed())
		Expect(s.w.attachments(s.g, s.w.nodeName("failed"))).To(HaveLen(1),
			"a stopped remediation releases nothing: the volume waits for the node")
		Expect(s.w.remediation(key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseStopped))
		s.recover(key)
	})

	It("s3gw with healthyDelay: the CR is kept while the node is Ready, and a new failure restarts the remediation", func() {
		// A new failure under the CR NHC keeps starts the remediation over,
		// while the Succeeded=True it reported stays for NHC.
		var key types.NamespacedName
		s := newEscalation(func(s *escalation, e *nhc.Emulator) {
			e.Template = templateRef(s.w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
			e.HealthyDelay = ptr.To(10 * time.Minute)
		})
		s.fail()
		s.pass()
		key = client.ObjectKeyFromObject(s.onlyCR("S3GWRemediation"))
		s.st.until(key, 20, succeeded)
		s.expectReleasedOnto(key, "StorageIsolation")

		// Back, but NHC keeps the CR for healthyDelay; the operator keeps
		// it Succeeded and touches nothing.
		s.w.setReady("failed", true)
		s.w.clock.Step(time.Minute)
		s.pass()
		Expect(s.w.asUnstructured(key).GetAnnotations()).To(HaveKey(nhc.HealthyDelayAnnotation))
		Expect(s.st.pass(key)).To(Succeed())
		Expect(succeeded(s.w.remediation(key))).To(BeTrue())

		// A second gateway lands on the node, which then fails again while
		// the CR is kept: NHC creates nothing new.
		second := s.w.addGateway("second", "failed", "healthy")
		s.fail()
		s.pass()
		Expect(s.crs("S3GWRemediation")).To(ConsistOf(HaveField("Object", HaveKeyWithValue("metadata",
			HaveKeyWithValue("name", key.Name)))), "the kept CR is the node's CR")

		// The remediation starts over for the new episode at once:
		// kube-controller-manager marked the node Unknown 50 s after
		// kube-apiserver stored the kubelet's last renewal.
		Expect(s.st.pass(key)).To(Succeed())
		s.st.until(key, 20, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
			for _, t := range rem.Status.Targets {
				if t.UID == second.pod.UID && t.State == s3gwv1alpha1.TargetReplaced {
					return succeeded(rem)
				}
			}
			return false
		})
		Expect(s.w.podExists(second.pod)).To(BeFalse())
		Expect(s.w.attachments(second, s.w.nodeName("failed"))).To(BeEmpty())

		// Healthy again: the delay counts from NHC's first healthy sighting.
		s.w.setReady("failed", true)
		s.w.clock.Step(10 * time.Minute)
		s.recover(key)
	})

	It("s3gw alone with healthyDelay: a second failure after NHC's lease is overdue is remediated, not timed out", func() {
		s := newEscalation(func(s *escalation, e *nhc.Emulator) {
			e.Template = templateRef(s.w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
			e.HealthyDelay = ptr.To(2 * time.Hour)
		})
		key, second := s.failTwiceUnderKeptCR(nil)
		lease, err := s.e.Lease(s.w.ctx, s.w.nodeName("failed"))
		Expect(err).NotTo(HaveOccurred())
		acquired := lease.Spec.AcquireTime.Time
		rem := s.w.remediation(key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain))
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, s3gwv1alpha1.ReasonWaitingForFencing))

		s.w.clock.Step(nhc.DefaultUnhealthyDuration + time.Second)
		Expect(s.w.clock.Now().After(acquired.Add(3 * nhc.DefaultTimeout))).To(BeTrue())
		s.pass()
		_, err = s.e.Lease(s.w.ctx, s.w.nodeName("failed"))
		Expect(err).To(HaveOccurred(), "NHC's overdue-lease path ran: it invalidated the lease")
		Expect(s.w.asUnstructured(key).GetAnnotations()).NotTo(HaveKey(annotations.NhcTimedOut),
			"NHC never times out a Succeeded=True CR")

		// A fencer proves the node off; the second gateway moves.
		fence := attachments.OutOfServiceTaint()
		fence.TimeAdded = ptr.To(metav1.NewTime(s.w.clock.Now()))
		s.w.taint("failed", fence)
		s.st.until(key, 20, completed)
		Expect(s.w.podExists(second.pod)).To(BeFalse())
		Expect(s.w.attachments(second, s.w.nodeName("failed"))).To(BeEmpty())
		Expect(s.w.attachments(second, s.w.nodeName("healthy"))).To(HaveLen(1))

		s.w.setReady("failed", true)
		s.w.clock.Step(2 * time.Hour)
		s.recover(key)
	})

	It("s3gw → FAR with healthyDelay: a second failure under the kept CR is not stopped, and FAR's fence moves it", func() {
		s := newEscalation(func(s *escalation, e *nhc.Emulator) {
			tmpl := s.w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{
				Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}}, false)
			e.Escalation = []nhc.Step{
				{Template: templateRef(tmpl), Order: 0, Timeout: 5 * time.Minute},
				{Template: s.w.farTemplate("fence"), Order: 1, Timeout: 5 * time.Minute},
			}
			e.HealthyDelay = ptr.To(2 * time.Hour)
		})
		key, second := s.failTwiceUnderKeptCR(func() {
			Expect(s.crs(farKind)).To(BeEmpty(), "back before the step's timeout: no FAR")
		})
		s.w.clock.Step(nhc.DefaultUnhealthyDuration + time.Second)
		s.pass() // our step is long past its timeout and its lease overdue
		Expect(s.w.asUnstructured(key).GetAnnotations()).NotTo(HaveKey(annotations.NhcTimedOut))
		s.w.clock.Step(time.Second)
		s.pass() // the next step
		far := s.onlyCR(farKind)
		// The controller's watch on FAR's kind wakes it on the new CR before
		// the agent reports: it sees it pending after the kubelet's last
		// change (the CR's creationTimestamp is the API server's clock,
		// which the story's clock has run far ahead of).
		Expect(s.st.pass(key)).To(Succeed())
		s.fenceAgent(far)

		s.st.until(key, 20, completed)
		Expect(s.w.remediation(key).Status.FencingEvidence).To(ConsistOf(farKind + "/" + s.w.ns + "/" + far.GetName()))
		Expect(s.w.attachments(second, s.w.nodeName("failed"))).To(BeEmpty(), "released by our step, not stopped")
		Expect(s.w.attachments(second, s.w.nodeName("healthy"))).To(HaveLen(1))
		Expect(s.w.asUnstructured(key).GetAnnotations()).NotTo(HaveKey(annotations.NhcTimedOut))

		// healthyDelay counts per CR from NHC's first healthy sighting.
		s.w.setReady("failed", true)
		s.pass()
		s.w.clock.Step(2*time.Hour + time.Minute)
		s.recover(key)
	})

	It("two S3GW templates in one escalation: generated names, the second step takes over", func() {
		var strict, lenient *s3gwv1alpha1.S3GWRemediationTemplate
		s := newEscalation(func(s *escalation, e *nhc.Emulator) {
			// Only a FAR could prove fencing for the strict step, and none runs.
			strict = s.w.template("strict", s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
				OutOfServiceTaint: ptr.To(false), StorageIsolation: ptr.To(false), Remediators: farEvidence()}}, true)
			lenient = s.w.template("lenient", s3gwv1alpha1.S3GWRemediationSpec{}, true)
			e.Escalation = []nhc.Step{
				{Template: templateRef(strict), Order: 0, Timeout: 2 * time.Minute},
				{Template: templateRef(lenient), Order: 1, Timeout: 5 * time.Minute},
			}
		})
		s.fail()
		s.pass()
		first := s.onlyCR("S3GWRemediation")
		Expect(first.GetName()).To(HavePrefix(s.w.nodeName("failed")+"-"), "generateName with multiple-templates support")
		Expect(first.GetAnnotations()).To(HaveKeyWithValue(nhc.TemplateNameAnnotation, strict.Name))
		firstKey := client.ObjectKeyFromObject(first)
		for range 3 {
			Expect(s.st.pass(firstKey)).To(Succeed())
		}
		Expect(s.w.remediation(firstKey).Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))

		s.w.clock.Step(2*time.Minute + time.Second)
		s.pass()
		s.w.clock.Step(time.Second)
		s.pass()
		Expect(s.st.pass(firstKey)).To(Succeed())
		Expect(s.w.remediation(firstKey).Status.Phase).To(Equal(s3gwv1alpha1.PhaseStopped))
		Expect(s.crs("S3GWRemediation")).To(HaveLen(2))
		secondKey := s.crFrom(lenient)
		Expect(secondKey.Name).To(HavePrefix(s.w.nodeName("failed") + "-"))

		s.st.until(secondKey, 20, succeeded)
		s.expectReleasedOnto(secondKey, "StorageIsolation")
		Expect(meta.IsStatusConditionTrue(s.w.remediation(firstKey).Status.Conditions, s3gwv1alpha1.ConditionSucceeded)).To(BeFalse())

		// NHC records one remediation per kind, so it cannot time the second
		// S3GW step out: it reports an error on every pass until the node is
		// healthy. A second step of one kind must be the last.
		_, err := s.e.Reconcile(s.w.ctx)
		Expect(err).To(MatchError(ContainSubstring("failed to find started remediation")))
		s.recover(firstKey, secondKey)
	})
})
