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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestMissingTemplateDisablesBeforeAnyDeletion: NHC validates its
// templates first; a missing one disables it before it deletes anything,
// so the CR of a node that recovered meanwhile stays, and no new CR is
// created. It looks again every 15 s and carries on once the template is
// back.
func TestMissingTemplateDisablesBeforeAnyDeletion(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("disabled")
	cr := f.failed(e, "w1")
	g.Expect(e.Disabled()).To(BeEmpty())
	g.Expect(e.EventsWithReason("Enabled")).To(HaveLen(1))

	f.deleteTemplate(e.Template)
	f.setReady("w1", corev1.ConditionTrue)
	f.node("w2", corev1.ConditionFalse)
	f.clock.Step(31 * time.Second)

	g.Expect(f.pass(e)).To(Equal(15 * time.Second))
	g.Expect(e.Disabled()).To(Equal(ReasonTemplateNotFound))
	g.Expect(e.EventsWithReason("Disabled")).To(HaveLen(1))
	g.Expect(f.gone(cr)).To(BeFalse(), "no CR is deleted while disabled")
	g.Expect(f.crs(e, "w2")).To(BeEmpty(), "no CR is created while disabled")
	f.pass(e)
	g.Expect(e.EventsWithReason("Disabled")).To(HaveLen(1), "the event comes with the change only")

	f.template(s3gwTemplate, "s3gw", false)
	f.pass(e)
	g.Expect(e.Disabled()).To(BeEmpty())
	g.Expect(f.gone(cr)).To(BeTrue())
	g.Expect(f.crs(e, "w2")).To(HaveLen(1))
}

// TestInvalidTemplateDisables: a template without spec.template disables
// NHC without a timed retry; only a template event wakes it.
func TestInvalidTemplateDisables(t *testing.T) {
	f := newFixture(t)
	g := f.g
	broken := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	ref := TemplateRef{APIVersion: farAPIVersion, Kind: farTemplate, Namespace: f.ns, Name: "broken"}
	broken.SetGroupVersionKind(ref.GVK())
	broken.SetNamespace(f.ns)
	broken.SetName("broken")
	g.Expect(f.c.Create(f.ctx, broken)).To(Succeed())
	e := f.emulator("invalid", func(e *Emulator) { e.Template = ref })
	f.failAndPass(e, "w1")
	g.Expect(e.Disabled()).To(Equal(ReasonTemplateInvalid))
	g.Expect(f.pass(e)).To(BeZero())
	g.Expect(f.crs(e, "w1")).To(BeEmpty())
}

// TestMinHealthySkipsRemediationEntirely: while minHealthy is violated NHC
// creates nothing, times nothing out and renews no lease; once it holds
// again, the overdue step times out at the next pass.
func TestMinHealthySkipsRemediationEntirely(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.twoSteps("storm-less", 2*time.Minute, 5*time.Minute, func(e *Emulator) { e.MinHealthy = ptr.To(intstr.FromInt32(3)) })
	for _, short := range []string{"w2", "w3", "w4"} {
		f.node(short, corev1.ConditionTrue)
	}
	cr := f.failed(e, "w1")
	lease, err := e.Lease(f.ctx, f.nodeName("w1"))
	g.Expect(err).NotTo(HaveOccurred())
	renewed := lease.Spec.RenewTime.Time

	f.setReady("w2", corev1.ConditionFalse)
	f.clock.Step(4 * time.Minute)
	f.pass(e)
	g.Expect(e.EventsWithReason("RemediationSkipped")).To(ContainElement(ContainSubstring("is 2 and should equal or exceed 3")))
	g.Expect(f.reread(cr).GetAnnotations()).NotTo(HaveKey(timedOutAnnotation), "no time-out while skipping")
	g.Expect(f.crs(e, "w2")).To(BeEmpty())
	lease, err = e.Lease(f.ctx, f.nodeName("w1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lease.Spec.RenewTime.Time).To(Equal(renewed), "no lease renewal while skipping")
	g.Expect(e.UnhealthyNodes()).To(ContainElement(And(HaveField("Name", f.nodeName("w1")),
		HaveField("Remediations", ConsistOf(HaveField("TimedOut", BeNil()))))))

	f.setReady("w2", corev1.ConditionTrue)
	f.pass(e)
	g.Expect(f.reread(cr).GetAnnotations()).To(HaveKey(timedOutAnnotation))
}

// TestStormRecovery: with stormCooldownDuration, a minHealthy violation
// starts a storm; remediation stays off after the violation ends until the
// cooldown has passed, then resumes.
func TestStormRecovery(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("storm", func(e *Emulator) {
		e.MinHealthy = ptr.To(intstr.FromInt32(3))
		e.StormCooldownDuration = ptr.To(time.Minute)
	})
	for _, short := range []string{"w3", "w4"} {
		f.node(short, corev1.ConditionTrue)
	}
	f.failAndPass(e, "w1", "w2")
	g.Expect(e.StormActive()).To(BeTrue())
	g.Expect(e.EventsWithReason("StormRecoveryStarted")).To(HaveLen(1))
	g.Expect(f.crs(e, "w1")).To(BeEmpty())

	f.setReady("w2", corev1.ConditionTrue)
	g.Expect(f.pass(e)).To(Equal(time.Minute+time.Second), "back when the cooldown ends")
	storm, cooldown := e.StormActive()
	g.Expect(storm && cooldown).To(BeTrue())
	g.Expect(f.crs(e, "w1")).To(BeEmpty(), "no remediation during the cooldown")
	g.Expect(e.EventsWithReason("RemediationSkipped")).To(ContainElement("Storm recovery active: skipping creation of new remediations"))

	f.clock.Step(time.Minute)
	f.pass(e)
	g.Expect(e.StormActive()).To(BeFalse())
	g.Expect(f.crs(e, "w1")).To(HaveLen(1))
}

// TestUnselectedNodesCRsAreOrphans: a node the selector no longer selects
// has its CRs deleted, its lease invalidated and its status entry dropped.
func TestUnselectedNodesCRsAreOrphans(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("unselect")
	cr := f.failed(e, "w1")

	node := f.getNode("w1")
	delete(node.Labels, testLabel)
	g.Expect(f.c.Update(f.ctx, node)).To(Succeed())
	f.pass(e)
	g.Expect(f.gone(cr)).To(BeTrue())
	g.Expect(f.leaseGone(e, "w1")).To(BeTrue())
	g.Expect(e.UnhealthyNodes()).To(BeEmpty())
}

// TestLeaseOverdueTimesOutAKeptCR: in classic mode the only time-out is the
// lease's, acquireTime + 3 × the remediation duration, counted from the
// first failure. A CR healthyDelay keeps across a second failure is timed
// out at that deadline unless it reports Succeeded=True.
func TestLeaseOverdueTimesOutAKeptCR(t *testing.T) {
	for _, succeeded := range []metav1.ConditionStatus{metav1.ConditionUnknown, metav1.ConditionTrue} {
		t.Run("Succeeded="+string(succeeded), func(t *testing.T) {
			f := newFixture(t)
			g := f.g
			e := f.classic("kept", func(e *Emulator) {
				e.Timeout = time.Minute
				e.HealthyDelay = ptr.To(10 * time.Minute)
			})
			cr := f.failed(e, "w1")
			f.setSucceeded(cr, metav1.ConditionTrue)

			f.setReady("w1", corev1.ConditionTrue)
			f.pass(e)
			g.Expect(f.gone(cr)).To(BeFalse(), "kept for healthyDelay")

			// The second failure: the remediator starts over.
			f.clock.Step(time.Minute)
			f.setReady("w1", corev1.ConditionUnknown)
			f.setSucceeded(cr, succeeded)
			f.clock.Step(31 * time.Second)
			f.pass(e)
			g.Expect(f.reread(cr).GetAnnotations()).NotTo(HaveKey(timedOutAnnotation))

			f.clock.Step(90 * time.Second) // 3 min 1 s after the lease was acquired
			f.pass(e)
			if succeeded == metav1.ConditionTrue {
				g.Expect(f.reread(cr).GetAnnotations()).NotTo(HaveKey(timedOutAnnotation))
			} else {
				g.Expect(f.reread(cr).GetAnnotations()).To(HaveKey(timedOutAnnotation), "the second failure is never remediated")
			}
			g.Expect(f.leaseGone(e, "w1")).To(BeTrue())
			g.Expect(e.UnhealthyNodes()).To(ConsistOf(HaveField("Remediations", ConsistOf(HaveField("TimedOut", Not(BeNil()))))))
		})
	}
}

// TestNodeUpdatesThatWakeNHC: NHC's node predicate.
func TestNodeUpdatesThatWakeNHC(t *testing.T) {
	selectors := []metav1.LabelSelector{{MatchLabels: map[string]string{"pool": "a"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpExists}}}}
	ready := func(s corev1.ConditionStatus) []corev1.NodeCondition {
		return []corev1.NodeCondition{{Type: corev1.NodeReady, Status: s, LastHeartbeatTime: metav1.Now()}}
	}
	base := func() *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"pool": "a", "other": "x"}},
			Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionTrue)}}
	}
	for _, tc := range []struct {
		name   string
		change func(*corev1.Node)
		wakes  bool
	}{
		{"a heartbeat", func(n *corev1.Node) { n.Status.Conditions = ready(corev1.ConditionTrue) }, false},
		{"Ready turns Unknown", func(n *corev1.Node) { n.Status.Conditions = ready(corev1.ConditionUnknown) }, true},
		{"a selected label changes", func(n *corev1.Node) { n.Labels["pool"] = "b" }, true},
		{"a label in an expression appears", func(n *corev1.Node) { n.Labels["zone"] = "z" }, true},
		{"another label changes", func(n *corev1.Node) { n.Labels["other"] = "y" }, false},
		{"the exclude label appears", func(n *corev1.Node) { n.Labels["remediation.medik8s.io/exclude-from-remediation"] = "true" }, true},
		{"manual confirmation", func(n *corev1.Node) { n.Annotations = map[string]string{ManuallyConfirmedHealthyAnnotation: ""} }, true},
		{"a taint", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldNode, newNode := base(), base()
			tc.change(newNode)
			NewWithT(t).Expect(NodeUpdateNeedsReconcile(oldNode, newNode, selectors)).To(Equal(tc.wakes))
		})
	}
	g := NewWithT(t)
	fresh := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	g.Expect(NodeUpdateNeedsReconcile(fresh, fresh.DeepCopy(), selectors)).To(BeFalse(), "no Ready condition yet")
}
