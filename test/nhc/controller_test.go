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

package nhc

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestControllerFollowsTheContract drives a classic NodeHealthCheck through
// a node's life: unhealthy long enough → a CR built as NHC builds it, under a
// lease owned by the Node; past the lease deadline → timed out and the lease
// invalidated; Ready again → deleted.
func TestControllerFollowsTheContract(t *testing.T) {
	f := newFixture(t)
	g := f.g
	ref := f.template(s3gwTemplate, "s3gw", false)
	var created []string
	e := f.emulator("workers", func(e *Emulator) {
		e.Template = ref
		e.Timeout = time.Minute
		e.OnCreate = func(_, name string) { created = append(created, name) }
	})
	ctrl := &Controller{Emulator: e}
	node := f.node("w1", corev1.ConditionUnknown)
	f.node("w2", corev1.ConditionTrue)

	res, err := ctrl.Reconcile(f.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: "any"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeNumerically("~", 31*time.Second, time.Second), "not unhealthy long enough yet")
	g.Expect(f.crs(e, "w1")).To(BeEmpty())

	f.clock.Step(31 * time.Second)
	f.pass(e)
	cr := f.onlyCR(e, "w1", "S3GWRemediation")
	g.Expect(cr.GetName()).To(Equal(node.Name), "named after the node without multiple-templates support")
	g.Expect(cr.GetNamespace()).To(Equal(f.ns), "the template's namespace")
	g.Expect(cr.GetAnnotations()).To(Equal(map[string]string{
		"remediation.medik8s.io/node-name": node.Name, TemplateNameAnnotation: "s3gw"}))
	g.Expect(cr.GetLabels()).To(Equal(map[string]string{PartOfLabel: PartOfValue}))
	g.Expect(cr.GetOwnerReferences()).To(ConsistOf(And(HaveField("APIVersion", "remediation.medik8s.io/v1alpha1"),
		HaveField("Kind", "NodeHealthCheck"), HaveField("Name", e.Name), HaveField("Controller", HaveValue(BeFalse())))))
	g.Expect(cr.GetFinalizers()).To(BeEmpty())
	g.Expect(cr.Object["spec"]).To(HaveKeyWithValue("release", HaveKeyWithValue("strategy", "ControllerDetach")))
	g.Expect(created).To(Equal([]string{node.Name}))
	g.Expect(e.EventsWithReason("RemediationCreated")).To(ConsistOf("Created remediation object for node " + node.Name))
	g.Expect(e.Remediating()).To(BeTrue())

	lease, err := e.Lease(f.ctx, node.Name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal("NodeHealthCheck-" + e.Name)))
	g.Expect(lease.Spec.LeaseDurationSeconds).To(HaveValue(BeEquivalentTo(120)), "timeout + 1m")
	g.Expect(lease.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "Node"), HaveField("UID", node.UID))))

	// A second pass finds the CR instead of creating another.
	f.pass(e)
	g.Expect(f.crs(e, "w1")).To(HaveLen(1))
	g.Expect(created).To(HaveLen(1))

	// Past acquireTime + 3 × timeout the lease is overdue: the CR is marked
	// timed out and the lease invalidated; the CR stays.
	f.clock.Step(3*time.Minute + time.Second)
	f.pass(e)
	g.Expect(f.reread(cr).GetAnnotations()).To(HaveKey(timedOutAnnotation))
	g.Expect(f.leaseGone(e, "w1")).To(BeTrue(), "an overdue lease is invalidated")
	g.Expect(e.UnhealthyNodes()).To(ConsistOf(HaveField("Remediations", ConsistOf(HaveField("TimedOut", Not(BeNil()))))))

	// Ready again: the CR goes, and the node counts as healthy once it has.
	f.setReady("w1", corev1.ConditionTrue)
	f.pass(e)
	g.Expect(f.gone(cr)).To(BeTrue())
	g.Expect(e.EventsWithReason("RemediationRemoved")).To(HaveLen(1))
	f.pass(e)
	g.Expect(e.UnhealthyNodes()).To(BeEmpty())
	g.Expect(e.Remediating()).To(BeFalse())
}

// TestEscalationMovesOnAsNHCDoes: Succeeded=False ends a step at once, a
// timeout ends it later, Succeeded=True spares the CR the annotation but not
// the step; the lease follows the current step; after the last step NHC
// gives up.
func TestEscalationMovesOnAsNHCDoes(t *testing.T) {
	f := newFixture(t)
	g := f.g
	first := f.template(s3gwTemplate, "fast-release", false)
	second := f.template(farTemplate, "fence", false)
	e := f.emulator("escalation", func(e *Emulator) {
		e.Escalation = []Step{{Template: second, Order: 2, Timeout: 5 * time.Minute}, {Template: first, Order: 1, Timeout: 2 * time.Minute}}
	})
	f.node("w1", corev1.ConditionFalse)
	f.clock.Step(31 * time.Second)

	requeue := f.pass(e)
	ours := f.onlyCR(e, "w1", "S3GWRemediation")
	g.Expect(requeue).To(Equal(2*time.Minute), "back when the step times out")
	lease, err := e.Lease(f.ctx, f.nodeName("w1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lease.Spec.LeaseDurationSeconds).To(HaveValue(BeEquivalentTo(180)), "step timeout + 1m")

	// Succeeded=False: the step is over at the next pass, the next step
	// starts one second later.
	f.setSucceeded(ours, "False")
	g.Expect(f.pass(e)).To(Equal(time.Second))
	g.Expect(f.reread(ours).GetAnnotations()).To(HaveKey(timedOutAnnotation))
	g.Expect(f.crs(e, "w1")).To(HaveLen(1), "the next CR comes with the next pass")
	f.clock.Step(time.Second)
	f.pass(e)
	far := f.onlyCR(e, "w1", "FenceAgentsRemediation")
	g.Expect(far.GetName()).To(Equal(f.nodeName("w1")))
	g.Expect(far.GetAnnotations()).To(HaveKeyWithValue(TemplateNameAnnotation, "fence"))
	g.Expect(f.gone(ours)).To(BeFalse(), "a timed-out CR is not deleted")
	lease, err = e.Lease(f.ctx, f.nodeName("w1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lease.Spec.LeaseDurationSeconds).To(HaveValue(BeEquivalentTo(360)), "extended for the FAR step")

	// Succeeded=True: no annotation when the timeout passes, but NHC moves
	// on, and with no step left it gives up.
	f.setSucceeded(far, "True")
	f.clock.Step(5*time.Minute + time.Second)
	f.pass(e)
	g.Expect(f.reread(far).GetAnnotations()).NotTo(HaveKey(timedOutAnnotation))
	f.pass(e)
	g.Expect(e.EventsWithReason("NoTemplateLeft")).To(HaveLen(1))
	g.Expect(f.crs(e, "w1")).To(HaveLen(2))
	g.Expect(e.UnhealthyNodes()[0].Remediations).To(HaveEach(HaveField("TimedOut", Not(BeNil()))))
}

// TestTwoTemplatesOfOneKind: with multiple-templates support the CRs get
// generated names; NHC records only the first CR of a kind in its status, so
// it cannot time the second step out.
func TestTwoTemplatesOfOneKind(t *testing.T) {
	f := newFixture(t)
	g := f.g
	strict := f.template(s3gwTemplate, "strict", true)
	lenient := f.template(s3gwTemplate, "lenient", true)
	e := f.emulator("two-s3gw", func(e *Emulator) {
		e.Escalation = []Step{{Template: strict, Order: 0, Timeout: time.Minute}, {Template: lenient, Order: 1, Timeout: time.Minute}}
	})
	f.node("w1", corev1.ConditionFalse)
	f.clock.Step(31 * time.Second)

	f.pass(e)
	crs := f.crs(e, "w1")
	g.Expect(crs).To(HaveLen(1))
	g.Expect(crs[0].GetName()).To(HavePrefix(f.nodeName("w1") + "-"))
	g.Expect(crs[0].GetAnnotations()).To(HaveKeyWithValue(TemplateNameAnnotation, "strict"))

	f.clock.Step(time.Minute + time.Second)
	f.pass(e)
	f.pass(e)
	crs = f.crs(e, "w1")
	g.Expect(crs).To(HaveLen(2))
	g.Expect(crs).To(ContainElement(HaveField("Object", HaveKeyWithValue("metadata",
		HaveKeyWithValue("annotations", HaveKeyWithValue(TemplateNameAnnotation, "lenient"))))))
	g.Expect(e.UnhealthyNodes()[0].Remediations).To(HaveLen(1), "NHC records one remediation per kind")

	_, err := e.Reconcile(f.ctx)
	g.Expect(err).To(MatchError(ContainSubstring("failed to find started remediation")),
		"NHC errors on every pass and never times the second step out")
}

// TestLeaseHeldElsewhere: a valid lease of another holder (e.g. node
// maintenance) stops NHC; once expired, NHC takes it over.
func TestLeaseHeldElsewhere(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("workers")
	other := &Emulator{Client: f.c, Name: "maintenance", Clock: f.clock}
	f.node("w1", corev1.ConditionFalse)
	g.Expect(other.requestLease(f.ctx, f.nodeName("w1"), time.Minute)).To(Succeed())
	f.clock.Step(31 * time.Second)

	g.Expect(f.pass(e)).To(Equal(time.Minute))
	g.Expect(f.crs(e, "w1")).To(BeEmpty())
	g.Expect(e.EventsWithReason("RemediationSkipped")).To(ConsistOf(ContainSubstring("node lease is already taken")))

	f.clock.Step(30 * time.Second)
	f.pass(e)
	g.Expect(f.crs(e, "w1")).To(HaveLen(1))
	lease, err := e.Lease(f.ctx, f.nodeName("w1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal("NodeHealthCheck-" + e.Name)))
	g.Expect(lease.Spec.LeaseTransitions).To(HaveValue(BeEquivalentTo(1)))
	g.Expect(lease.Spec.AcquireTime.Time).To(BeTemporally("~", f.clock.Now(), time.Second))
}

// TestForeignCRStopsNHC: a CR NHC did not create that matches the node (by
// its annotations, or by name when it has no template-name) makes NHC
// create nothing, and it is never deleted by NHC.
func TestForeignCRStopsNHC(t *testing.T) {
	f := newFixture(t)
	g := f.g
	ref := f.template(farTemplate, "fence", false)
	e := f.emulator("workers", func(e *Emulator) { e.Template = ref })
	f.node("w1", corev1.ConditionFalse)
	delegate := newCR(ref.RemediationGVK(), f.ns, f.nodeName("w1"))
	g.Expect(f.c.Create(f.ctx, delegate)).To(Succeed())
	f.clock.Step(31 * time.Second)

	f.pass(e)
	g.Expect(f.crs(e, "w1")).To(BeEmpty(), "no CR of its own")
	g.Expect(e.EventsWithReason("RemediationCreated")).To(BeEmpty())

	f.setReady("w1", corev1.ConditionTrue)
	f.pass(e)
	g.Expect(f.gone(delegate)).To(BeFalse(), "NHC deletes only its own CRs")
}

// TestMinHealthyAndControlPlane: NHC remediates nothing while fewer nodes
// than minHealthy are healthy, and one control-plane node at a time.
func TestMinHealthyAndControlPlane(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("cp", func(e *Emulator) { e.MinHealthy = nil })
	f.node("cp1", corev1.ConditionFalse, "node-role.kubernetes.io/control-plane")
	f.node("cp2", corev1.ConditionFalse, "node-role.kubernetes.io/master")
	f.node("cp3", corev1.ConditionTrue, "node-role.kubernetes.io/control-plane")
	f.clock.Step(31 * time.Second)

	f.pass(e)
	g.Expect(f.crs(e, "cp1")).To(BeEmpty())
	g.Expect(f.crs(e, "cp2")).To(BeEmpty())
	g.Expect(e.EventsWithReason("RemediationSkipped")).To(ConsistOf(ContainSubstring("is 1 and should equal or exceed 2")),
		"51% of 3 nodes, rounded up")

	f.node("cp4", corev1.ConditionTrue, "node-role.kubernetes.io/control-plane")
	f.node("cp5", corev1.ConditionTrue, "node-role.kubernetes.io/control-plane")
	f.pass(e)
	cps := len(f.crs(e, "cp1")) + len(f.crs(e, "cp2"))
	g.Expect(cps).To(Equal(1), "one control-plane node at a time")
	g.Expect(e.EventsWithReason("RemediationSkipped")).To(ContainElement(ContainSubstring("control plane / etcd quorum loss")))
	for _, short := range []string{"cp1", "cp2"} {
		for _, cr := range f.crs(e, short) {
			g.Expect(cr.GetLabels()).To(HaveKey(ControlPlaneLabel))
		}
	}
}

// TestHealthyDelay: CRs stay for healthyDelay after NHC first sees the node
// healthy, also if the node fails again meanwhile (no new CR, the stamp
// stays); manual confirmation deletes at once and is then removed.
func TestHealthyDelay(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("delay", func(e *Emulator) { e.HealthyDelay = ptr.To(10 * time.Minute) })
	cr := f.failed(e, "w1")

	f.setReady("w1", corev1.ConditionTrue)
	g.Expect(f.pass(e)).To(Equal(11*time.Second), "back to log the CR still there; its deletion would wake NHC sooner")
	stamp := f.reread(cr).GetAnnotations()[HealthyDelayAnnotation]
	g.Expect(stamp).NotTo(BeEmpty())
	f.clock.Step(5 * time.Minute)
	f.pass(e)
	g.Expect(f.gone(cr)).To(BeFalse(), "kept within the delay")

	// The node fails again: the kept CR is the node's CR, nothing new.
	f.setReady("w1", corev1.ConditionUnknown)
	f.clock.Step(31 * time.Second)
	f.pass(e)
	g.Expect(f.crs(e, "w1")).To(ConsistOf(HaveField("Object", HaveKeyWithValue("metadata", HaveKeyWithValue("uid", string(cr.GetUID()))))))
	g.Expect(f.reread(cr).GetAnnotations()).To(HaveKeyWithValue(HealthyDelayAnnotation, stamp), "the stamp is never removed")
	g.Expect(e.EventsWithReason("RemediationCreated")).To(HaveLen(1))

	// Healthy again: the delay still counts from the first stamp.
	f.setReady("w1", corev1.ConditionTrue)
	f.clock.Step(4*time.Minute + 30*time.Second)
	f.pass(e)
	g.Expect(f.gone(cr)).To(BeTrue(), "10 min after the first healthy sighting")

	// With manual confirmation, the delay does not apply.
	f.failAndPass(e, "w2")
	cr2 := f.onlyCR(e, "w2", "S3GWRemediation")
	f.setReady("w2", corev1.ConditionTrue)
	node := f.getNode("w2")
	node.Annotations = map[string]string{ManuallyConfirmedHealthyAnnotation: ""}
	g.Expect(f.c.Update(f.ctx, node)).To(Succeed())
	f.pass(e)
	g.Expect(f.gone(cr2)).To(BeTrue())
	f.pass(e)
	g.Expect(f.getNode("w2").Annotations).NotTo(HaveKey(ManuallyConfirmedHealthyAnnotation))
	g.Expect(f.leaseGone(e, "w2")).To(BeTrue())
}

// TestPauseKeepsEverything: a paused NodeHealthCheck creates nothing and
// deletes nothing, not even the CR of a node that recovered, so it stays
// "remediating" until the pause is lifted.
func TestPauseKeepsEverything(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("pause")
	cr := f.failed(e, "w1")

	e.PauseRequests = []string{"uninstall"}
	f.setReady("w1", corev1.ConditionTrue)
	f.node("w2", corev1.ConditionFalse)
	f.clock.Step(31 * time.Second)
	f.pass(e)
	g.Expect(f.gone(cr)).To(BeFalse())
	g.Expect(f.crs(e, "w2")).To(BeEmpty())
	g.Expect(e.Remediating()).To(BeTrue())

	e.PauseRequests = nil
	f.pass(e)
	g.Expect(f.gone(cr)).To(BeTrue())
}

// TestDeletedNode: the CRs of a deleted node go at once, except one that
// expects permanent node deletion and has not succeeded.
func TestDeletedNode(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("orphans")
	f.failAndPass(e, "w1", "w2")
	cr1, cr2 := f.onlyCR(e, "w1", "S3GWRemediation"), f.onlyCR(e, "w2", "S3GWRemediation")
	g.Expect(f.c.Get(f.ctx, client.ObjectKeyFromObject(cr2), cr2)).To(Succeed())
	g.Expect(unstructured.SetNestedSlice(cr2.Object, []any{map[string]any{"type": "PermanentNodeDeletionExpected",
		"status": "True", "reason": "Test", "message": "", "lastTransitionTime": "2026-11-30T00:00:00Z"}}, "status", "conditions")).To(Succeed())
	g.Expect(f.c.Status().Update(f.ctx, cr2)).To(Succeed())

	for _, short := range []string{"w1", "w2"} {
		g.Expect(f.c.Delete(f.ctx, f.getNode(short))).To(Succeed())
	}
	f.pass(e)
	g.Expect(f.gone(cr1)).To(BeTrue())
	g.Expect(f.gone(cr2)).To(BeFalse(), "waits for Succeeded=True")
	g.Expect(f.leaseGone(e, "w1")).To(BeTrue())
	f.setSucceeded(cr2, "True")
	f.pass(e)
	g.Expect(f.gone(cr2)).To(BeTrue())
}

// TestRemediateUsesGenerateNameWithMultipleTemplatesSupport checks NHC's
// naming rule and the exclude label through the step-by-step API.
func TestRemediateUsesGenerateNameWithMultipleTemplatesSupport(t *testing.T) {
	f := newFixture(t)
	g := f.g
	ref := f.template(s3gwTemplate, "multi", true)
	e := f.emulator("workers", func(e *Emulator) { e.Template = ref })
	cp := f.node("cp-1", corev1.ConditionFalse, "node-role.kubernetes.io/control-plane")
	cr, err := e.Remediate(f.ctx, cp)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cr.GetName()).To(HavePrefix(cp.Name + "-"))
	g.Expect(cr.GetLabels()).To(HaveKey(ControlPlaneLabel))

	excluded := f.node("w-2", corev1.ConditionFalse, "remediation.medik8s.io/exclude-from-remediation")
	excluded.Labels["remediation.medik8s.io/exclude-from-remediation"] = "true"
	cr, err = e.Remediate(f.ctx, excluded)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cr).To(BeNil())
}
