//go:build e2e

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

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/far"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// farStepTimeout is the FAR step's timeout in the escalations below: NHC's
// webhook allows no less.
const farStepTimeout = time.Minute

// The FAR template and its Secret live in FAR's namespace, where NHC
// creates FAR's CRs: the configuration FAR documents, with an escalating
// NodeHealthCheck that tries FAR first and s3gw-remediation next.
var _ = Describe("Escalation from FAR to s3gw-remediation", func() {
	It("escalates at once when FAR's fence agent fails, and moves s3gw on storage isolation", func(ctx SpecContext) {
		s := newScenario(ctx, "far-fails", 1)
		fence, err := env.CreateFARTemplate(ctx, harness.FARTemplate{Name: s.name, Fail: true,
			RetryCount: 2, RetryInterval: time.Second})
		Expect(err).NotTo(HaveOccurred())
		em, err := env.EnableRemediation(ctx, harness.Remediation{Name: s.name, NodeSelector: map[string]string{poolLabel: s.name},
			FirstSteps: []nhc.Step{{Template: fence, Order: 1, Timeout: 5 * time.Minute}}})
		Expect(err).NotTo(HaveOccurred())
		g := s.gateway(ctx, "demo", s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		By("FAR tries twice, fails, and NHC moves on at once instead of after the step's 5 minutes")
		Expect(r.Wait(ctx, harness.RemediationCreated, 2*crDeadline)).To(Succeed())
		farCR := onlyFAR(ctx, r.Node)
		Expect(conditionStatus(farCR, far.SucceededType)).To(Equal(metav1.ConditionFalse))
		Expect(conditionStatus(farCR, far.FenceAgentActionSucceededType)).To(Equal(metav1.ConditionFalse))
		Expect(farCR.GetAnnotations()).To(HaveKey("remediation.medik8s.io/nhc-timed-out"))
		Expect(env.PowerStatus(r.Node)).To(Equal("on"), "the agent never powered the node off")
		Expect(nodeHasTaint(ctx, r.Node, farTaint)).To(BeTrue(), "FAR's taint stays until its CR goes")

		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(r)
		rem := expectMoved(ctx, r, s.spare)
		Expect(rem.Status.FencingEvidence).To(ConsistOf("StorageIsolation"))

		recoverAndExpectCleanup(ctx, r, em)
		Eventually(ctx, func() []string { return farCRs(ctx, r.Node) }).WithTimeout(cleanupDeadline).Should(BeEmpty(),
			"NHC deleted the timed-out FAR CR and FAR let it go")
		Expect(nodeHasTaint(ctx, r.Node, farTaint)).To(BeFalse())
	}, SpecTimeout(specTimeout))

	It("escalates after the FAR step's timeout although FAR fenced, and releases on FAR's evidence", func(ctx SpecContext) {
		s := newScenario(ctx, "far-first", 1)
		fence, err := env.CreateFARTemplate(ctx, harness.FARTemplate{Name: s.name})
		Expect(err).NotTo(HaveOccurred())
		em, err := env.EnableRemediation(ctx, harness.Remediation{Name: s.name, NodeSelector: map[string]string{poolLabel: s.name},
			Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false),
				Remediators: []s3gwv1alpha1.RemediatorEvidence{harness.FARRemediator()}}},
			FirstSteps: []nhc.Step{{Template: fence, Order: 1, Timeout: farStepTimeout}}})
		Expect(err).NotTo(HaveOccurred())
		g := s.gateway(ctx, "demo", s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		By("FAR fences and deletes the node's pods; NHC waits for the step's timeout all the same")
		Eventually(ctx, func() metav1.ConditionStatus {
			crs := farCRs(ctx, r.Node)
			if len(crs) == 0 {
				return ""
			}
			return conditionStatus(onlyFAR(ctx, r.Node), far.SucceededType)
		}).WithTimeout(crDeadline).Should(Equal(metav1.ConditionTrue))
		Expect(env.PowerStatus(r.Node)).To(Equal("off"))
		Expect(r.Wait(ctx, harness.OldPodGone, crDeadline)).To(Succeed(), "FAR's ResourceDeletion deleted it")
		Expect(r.Wait(ctx, harness.RemediationCreated, farStepTimeout+crDeadline)).To(Succeed())
		Expect(onlyFAR(ctx, r.Node).GetAnnotations()).NotTo(HaveKey("remediation.medik8s.io/nhc-timed-out"),
			"NHC never times out a CR that reports Succeeded=True")
		Expect(em.UnhealthyNodes()).To(ContainElement(HaveField("Remediations",
			ContainElement(And(HaveField("GVK.Kind", harness.FARKind), HaveField("TimedOut", Not(BeNil())))))),
			"the step counts as timed out")

		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(r)
		rem := expectMovedAfterFAR(ctx, r, s.spare)
		Expect(rem.Status.FencingEvidence).To(ConsistOf(HavePrefix(harness.FARKind + "/" + harness.FARNamespace + "/" + r.Node + "-")))

		recoverAndExpectCleanup(ctx, r, em)
		Eventually(ctx, func() []string { return farCRs(ctx, r.Node) }).WithTimeout(cleanupDeadline).Should(BeEmpty())
		Expect(nodeHasTaint(ctx, r.Node, farTaint)).To(BeFalse())
	}, SpecTimeout(specTimeout))
})

// The FAR template and its Secret live in FAR's namespace; the first step's
// S3GWRemediationTemplate delegates fencing to it, the second moves s3gw on
// storage isolation.
var _ = Describe("A failed FAR delegate", func() {
	It("fails our step at once, so NHC moves on long before its timeout, and the next step moves s3gw", func(ctx SpecContext) {
		s := newScenario(ctx, "delegate-fails", 1)
		fence, err := env.CreateFARTemplate(ctx, harness.FARTemplate{Name: s.name, Fail: true,
			RetryCount: 2, RetryInterval: time.Second})
		Expect(err).NotTo(HaveOccurred())
		fenced, err := env.CreateS3GWTemplate(ctx, s.name+"-fenced", s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{OutOfServiceTaint: ptr.To(false), StorageIsolation: ptr.To(false),
				Delegate: harness.FARDelegate(fence)}})
		Expect(err).NotTo(HaveOccurred())
		// The first step's timeout outlasts the spec: only its failure
		// moves NHC on in time.
		em, err := env.EnableRemediation(ctx, harness.Remediation{Name: s.name, NodeSelector: map[string]string{poolLabel: s.name},
			FirstSteps: []nhc.Step{{Template: fenced, Order: 1, Timeout: specTimeout}}})
		Expect(err).NotTo(HaveOccurred())
		g := s.gateway(ctx, "demo", s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		By("fence_dummy fails twice; FAR gives up and the first step reports it")
		first := awaitRemediationOf(ctx, r.Node, fenced.Name, 2*crDeadline,
			haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonDelegateFailed))
		farCR := onlyFAR(ctx, r.Node)
		Expect(farCR.GetNamespace()).To(Equal(harness.FARNamespace))
		Expect(conditionStatus(farCR, far.SucceededType)).To(Equal(metav1.ConditionFalse))
		Expect(meta.FindStatusCondition(first.Status.Conditions, s3gwv1alpha1.ConditionSucceeded).Message).To(ContainSubstring(
			"delegate " + harness.FARKind + "/" + harness.FARNamespace + "/" + farCR.GetName() + " failed ("))
		Expect(env.PowerStatus(r.Node)).To(Equal("on"), "the agent never powered the node off")

		By("NHC moves on at once; the next step moves s3gw on storage isolation")
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		second := awaitRemediationOf(ctx, r.Node, s.name, crDeadline,
			haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished))
		Expect(second.Status.FencingEvidence).To(ConsistOf("StorageIsolation"))
		Expect(remediationOf(ctx, r.Node, fenced.Name).Status.Phase).To(Equal(s3gwv1alpha1.PhaseStopped),
			"NHC timed the failed step out")
		Expect(farCRs(ctx, r.Node)).To(HaveLen(1), "never a second fence for this failure")
		report(r)

		recoverAndExpectCleanup(ctx, r, em)
		Eventually(ctx, func() []string { return farCRs(ctx, r.Node) }).WithTimeout(cleanupDeadline).Should(BeEmpty(),
			"the operator deleted its delegate with its CR")
		Expect(nodeHasTaint(ctx, r.Node, farTaint)).To(BeFalse())
	}, SpecTimeout(specTimeout))
})

// awaitRemediationOf waits until the node's S3GWRemediation from the
// template has conditions that match, and returns it.
func awaitRemediationOf(ctx context.Context, node, template string, timeout time.Duration, conditions OmegaMatcher) *s3gwv1alpha1.S3GWRemediation {
	var rem *s3gwv1alpha1.S3GWRemediation
	Eventually(ctx, func() []metav1.Condition {
		if rem = remediationOf(ctx, node, template); rem == nil {
			return nil
		}
		return rem.Status.Conditions
	}).WithTimeout(timeout).Should(conditions)
	return rem
}

// remediationOf is the node's S3GWRemediation NHC created from the
// template, or nil.
func remediationOf(ctx context.Context, node, template string) *s3gwv1alpha1.S3GWRemediation {
	var rems s3gwv1alpha1.S3GWRemediationList
	Expect(env.Client.List(ctx, &rems)).To(Succeed())
	for i := range rems.Items {
		if rem := &rems.Items[i]; far.NodeName(rem) == node && rem.Annotations[nhc.TemplateNameAnnotation] == template {
			return rem
		}
	}
	return nil
}

// onlyFAR is the node's one FenceAgentsRemediation.
func onlyFAR(ctx context.Context, node string) *unstructured.Unstructured {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(harness.FARAPIVersion)
	list.SetKind(harness.FARKind + "List")
	Expect(env.Client.List(ctx, list)).To(Succeed())
	var out []unstructured.Unstructured
	for _, item := range list.Items {
		if far.NodeName(&item) == node {
			out = append(out, item)
		}
	}
	Expect(out).To(HaveLen(1), "one FenceAgentsRemediation for %s", node)
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&out[0]), &out[0])).To(Succeed())
	return &out[0]
}

func conditionStatus(obj *unstructured.Unstructured, condType string) metav1.ConditionStatus {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	conds := make([]metav1.Condition, 0, len(raw))
	for _, c := range raw {
		if m, ok := c.(map[string]any); ok {
			t, _ := m["type"].(string)
			st, _ := m["status"].(string)
			conds = append(conds, metav1.Condition{Type: t, Status: metav1.ConditionStatus(st)})
		}
	}
	if c := meta.FindStatusCondition(conds, condType); c != nil {
		return c.Status
	}
	return ""
}
