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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

const specTimeout = 5 * time.Minute

var _ = Describe("Failover of a fenced node", func() {
	It("moves s3gw with ControllerDetach and cleans up after the node recovers", func(ctx SpecContext) {
		s := newScenario(ctx, "detach", 1)
		em := s.remediate(ctx, s3gwv1alpha1.S3GWRemediationSpec{
			Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseControllerDetach}})
		g := s.gateway(ctx, "demo", s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(r)
		rem := expectMoved(ctx, r, s.spare)
		Expect(rem.Status.FencingEvidence).To(ConsistOf("StorageIsolation"))
		Expect(rem.Status.AddedTaints).To(BeEmpty())
		var n corev1.Node
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: r.Node}, &n)).To(Succeed())
		Expect(n.Status.VolumesInUse).NotTo(ContainElement(longhorn.UniqueVolumeName(g.Volume.Name)),
			"ControllerDetach cleared the dead kubelet's volumesInUse entry")

		recoverAndExpectCleanup(ctx, r, em)
		expectAttachedOnlyTo(ctx, g, s.spare)
	}, SpecTimeout(specTimeout))

	It("moves s3gw with DeleteVolumeAttachment and cleans up after the node recovers", func(ctx SpecContext) {
		s := newScenario(ctx, "delete-va", 1)
		em := s.remediate(ctx, s3gwv1alpha1.S3GWRemediationSpec{
			Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseDeleteVolumeAttachment}})
		g := s.gateway(ctx, "demo", s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		// The attach-detach controller notices the deleted VolumeAttachment
		// only at its 1-minute sync.
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(r)
		rem := expectMoved(ctx, r, s.spare)
		Expect(rem.Status.FencingEvidence).To(ConsistOf("StorageIsolation"))
		var n corev1.Node
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: r.Node}, &n)).To(Succeed())
		Expect(n.Status.VolumesInUse).To(ContainElement(longhorn.UniqueVolumeName(g.Volume.Name)),
			"only ControllerDetach edits the dead kubelet's volumesInUse")

		recoverAndExpectCleanup(ctx, r, em)
		expectAttachedOnlyTo(ctx, g, s.spare)
	}, SpecTimeout(specTimeout))

	It("moves s3gw with OutOfServiceTaint once its FAR delegate fenced the node, and removes the taints after the node recovers", func(ctx SpecContext) {
		s := newScenario(ctx, "oos", 1)
		// The taint is for nodes proven shut down: the evidence is a fence
		// agent's (fence_dummy run by the FAR stand-in for the operator's
		// delegate), not storage isolation. The FAR template and its
		// credential Secret live in FAR's namespace, as FAR's users keep
		// them; the delegate is created there, where FAR (with its own
		// RBAC: Secrets only in its namespace) reads the Secret.
		fence, err := env.CreateFARTemplate(ctx, harness.FARTemplate{Name: "far-" + s.name})
		Expect(err).NotTo(HaveOccurred())
		em := s.remediate(ctx, s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false), Delegate: harness.FARDelegate(fence)},
			Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}})
		g := s.gateway(ctx, "demo", s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(r)
		rem := expectMoved(ctx, r, s.spare)
		Expect(rem.Status.FencingEvidence).To(ConsistOf(HavePrefix("delegate " + harness.FARKind + "/" + harness.FARNamespace + "/" + r.Node + "-")))
		Expect(rem.Status.Delegate.Namespace).To(Equal(harness.FARNamespace))
		Expect(env.PowerStatus(r.Node)).To(Equal("off"), "fence_dummy powered the node off")
		Expect(rem.Status.AddedTaints).To(ConsistOf(HaveField("Key", corev1.TaintNodeOutOfService)))
		Expect(nodeHasTaint(ctx, r.Node, outOfServiceTaint)).To(BeTrue())
		Expect(nodeHasTaint(ctx, r.Node, farTaint)).To(BeTrue(), "FAR's own NoSchedule taint")

		recoverAndExpectCleanup(ctx, r, em)
		expectAttachedOnlyTo(ctx, g, s.spare)
		Expect(nodeHasTaint(ctx, r.Node, outOfServiceTaint)).To(BeFalse(), "the operator removed its taint")
		Eventually(ctx, func() []string { return farCRs(ctx, r.Node) }).
			WithTimeout(cleanupDeadline).Should(BeEmpty(), "the operator deleted its delegate once NHC deleted its CR")
		Expect(nodeHasTaint(ctx, r.Node, farTaint)).To(BeFalse(), "FAR removed its taint before its finalizer")
	}, SpecTimeout(specTimeout))

	It("moves two gateways off two nodes that fail at once", func(ctx SpecContext) {
		s := newScenario(ctx, "two", 2)
		em := s.remediate(ctx, s3gwv1alpha1.S3GWRemediationSpec{})
		alpha := s.gateway(ctx, "alpha", s.victims[0], s.spare)
		beta := s.gateway(ctx, "beta", s.victims[1], s.spare)

		runs := fail(ctx, alpha, beta)
		for _, r := range runs {
			Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
			Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
			report(r)
			rem := expectMoved(ctx, r, s.spare)
			Expect(rem.Status.FencingEvidence).To(ConsistOf("StorageIsolation"))
		}
		Expect(runs[0].Remediation()).NotTo(Equal(runs[1].Remediation()), "one CR per node")
		for _, r := range runs {
			recoverAndExpectCleanup(ctx, r, em)
		}
	}, SpecTimeout(specTimeout))
})

var _ = Describe("Fencing gate", func() {
	It("releases nothing for a partitioned node without fencing evidence", func(ctx SpecContext) {
		s := newScenario(ctx, "partition", 1)
		em := s.remediate(ctx, s3gwv1alpha1.S3GWRemediationSpec{})
		// A replica on the failed node: storage isolation does not hold, and
		// nothing else proves the node cannot write.
		g := s.gateway(ctx, "demo", s.victims[0], s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		Expect(r.Wait(ctx, harness.RemediationCreated, crDeadline)).To(Succeed())
		Eventually(ctx, func() s3gwv1alpha1.Phase { return remediationFor(ctx, r.Node).Status.Phase }).
			WithTimeout(crDeadline).Should(Equal(s3gwv1alpha1.PhaseWaitingForFencing))

		By("Watching for " + fencingGateWindow.String() + " that nothing is released")
		Consistently(ctx, func(gm Gomega) {
			rem := remediationFor(ctx, r.Node)
			gm.Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
			gm.Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonWaitingForFencing))
			gm.Expect(rem.Status.FencingEvidence).To(BeEmpty())
			gm.Expect(rem.Status.AddedTaints).To(BeEmpty())
			expectStillAttachedTo(gm, ctx, g, r.Node)
			var old corev1.Pod
			gm.Expect(env.Client.Get(ctx, r.OldPod, &old)).To(Succeed(), "the old pod is not force-deleted")
			gm.Expect(old.UID).To(Equal(r.OldUID))
			_, ready := r.Seen(harness.ReplacementReady)
			gm.Expect(ready).To(BeFalse())
		}).WithTimeout(fencingGateWindow).WithPolling(250 * time.Millisecond).Should(Succeed())
		Expect(nodeHasTaint(ctx, r.Node, outOfServiceTaint)).To(BeFalse())
		report(r)

		// The node comes back: its kubelet finishes the eviction and the
		// volume moves the normal way; NHC deletes the CR.
		recoverAndExpectCleanup(ctx, r, em)
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		_, newNode := r.Replacement()
		expectAttachedOnlyTo(ctx, g, newNode)
	}, SpecTimeout(specTimeout))

	It("releases nothing while a second node holding a replica is lost with s3gw's node", func(ctx SpecContext) {
		s := newScenario(ctx, "rack", 2)
		em := s.remediate(ctx, s3gwv1alpha1.S3GWRemediationSpec{})
		// No replica on s3gw's node, one on its rack mate and one on the
		// spare: storage isolation would hold but for the rack mate.
		node, rackmate := s.victims[0], s.victims[1]
		g := s.gateway(ctx, "demo", node, rackmate, s.spare)

		By("Cutting " + node + " and " + rackmate + " off together, as a failed rack uplink would")
		Expect(env.Cluster.FailNode(ctx, rackmate)).To(Succeed())
		r := fail(ctx, g)[0]
		Expect(r.Wait(ctx, harness.RemediationCreated, crDeadline)).To(Succeed())
		Eventually(ctx, func() s3gwv1alpha1.Phase { return remediationFor(ctx, r.Node).Status.Phase }).
			WithTimeout(crDeadline).Should(Equal(s3gwv1alpha1.PhaseWaitingForFencing))

		By("Watching for " + fencingGateWindow.String() + " that nothing is released")
		Consistently(ctx, func(gm Gomega) {
			rem := remediationFor(ctx, r.Node)
			gm.Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
			fenced := meta.FindStatusCondition(rem.Status.Conditions, s3gwv1alpha1.ConditionFenced)
			gm.Expect(fenced).NotTo(BeNil())
			gm.Expect(fenced.Status).To(Equal(metav1.ConditionFalse))
			gm.Expect(fenced.Message).To(MatchRegexp(`replica \S+ of %s is on node %s, which longhorn-manager cannot reach`,
				g.Volume.Name, rackmate))
			expectStillAttachedTo(gm, ctx, g, r.Node)
			var old corev1.Pod
			gm.Expect(env.Client.Get(ctx, r.OldPod, &old)).To(Succeed(), "the old pod is not force-deleted")
			gm.Expect(old.UID).To(Equal(r.OldUID))
		}).WithTimeout(fencingGateWindow).WithPolling(250 * time.Millisecond).Should(Succeed())
		report(r)

		By("Bringing the rack mate back: Longhorn can stop its replica again")
		Expect(env.Cluster.RecoverNode(ctx, rackmate)).To(Succeed())
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		rem := expectMoved(ctx, r, s.spare)
		Expect(rem.Status.FencingEvidence).To(ConsistOf("StorageIsolation"))
		recoverAndExpectCleanup(ctx, r, em)
	}, SpecTimeout(specTimeout))

	It("accepts an out-of-service taint an admin put on the node as fencing evidence", func(ctx SpecContext) {
		s := newScenario(ctx, "admin-taint", 1)
		// Storage isolation off, so the taint is the only evidence; the
		// replica is off the failed node, or nothing would move whatever
		// the evidence (a replica there may have writes the others lack).
		em := s.remediate(ctx, s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false)}})
		g := s.gateway(ctx, "demo", s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		Expect(r.Wait(ctx, harness.RemediationCreated, crDeadline)).To(Succeed())
		Eventually(ctx, func() s3gwv1alpha1.Phase { return remediationFor(ctx, r.Node).Status.Phase }).
			WithTimeout(crDeadline).Should(Equal(s3gwv1alpha1.PhaseWaitingForFencing))

		By("Tainting " + r.Node + " out of service, as an admin who verified it is shut down")
		setTaint(ctx, r.Node, &outOfServiceTaint)
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(r)
		rem := expectMoved(ctx, r, s.spare)
		Expect(rem.Status.FencingEvidence).To(ConsistOf("OutOfServiceTaint"))
		Expect(rem.Status.AddedTaints).To(BeEmpty(), "the admin's taint is not the operator's")

		recoverAndExpectCleanup(ctx, r, em)
		Expect(nodeHasTaint(ctx, r.Node, outOfServiceTaint)).To(BeTrue(), "the operator leaves the admin's taint alone")
		setTaint(ctx, r.Node, nil)
	}, SpecTimeout(specTimeout))
})

var _ = Describe("Without remediation", func() {
	It("leaves the gateway stuck on the dead node's attachment", func(ctx SpecContext) {
		s := newScenario(ctx, "baseline", 1) // no NodeHealthCheck selects these nodes
		g := s.gateway(ctx, "demo", s.victims[0], s.spare)

		r := fail(ctx, g)[0]
		Expect(r.Wait(ctx, harness.OldPodTerminating, crDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.ReplacementScheduled, crDeadline)).To(Succeed())
		Eventually(ctx, func() (bool, error) { return multiAttachReported(ctx, g) }).
			WithTimeout(crDeadline).Should(BeTrue(), "the replacement reports it waits for the detach")

		By("Watching for " + stuckWindow.String() + " that the gateway stays down")
		Consistently(ctx, func(gm Gomega) {
			expectStillAttachedTo(gm, ctx, g, r.Node)
			_, ready := r.Seen(harness.ReplacementReady)
			gm.Expect(ready).To(BeFalse())
			gm.Expect(remediationFor(ctx, r.Node)).To(BeNil())
		}).WithTimeout(stuckWindow).WithPolling(250 * time.Millisecond).Should(Succeed())
		report(r)

		Expect(env.Recover(ctx, r)).To(Succeed())
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		expectAttachedOnlyTo(ctx, g, s.spare)
	}, SpecTimeout(specTimeout))
})

// multiAttachReported finds the attach-detach controller's event saying the
// replacement's RWO volume is still attached elsewhere (1.37 words it
// "Waiting for detach", older releases "Multi-Attach error").
func multiAttachReported(ctx context.Context, g *harness.Gateway) (bool, error) {
	var events corev1.EventList
	if err := env.Client.List(ctx, &events, client.InNamespace(g.Namespace)); err != nil {
		return false, err
	}
	for _, ev := range events.Items {
		if ev.Reason == "FailedAttachVolume" &&
			(strings.Contains(ev.Message, "Waiting for detach") || strings.Contains(ev.Message, "Multi-Attach error")) {
			return true, nil
		}
	}
	return false, nil
}
