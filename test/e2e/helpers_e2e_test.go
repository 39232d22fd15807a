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
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
	"github.com/s3gw-tech/s3gw-remediation/test/far"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
	"github.com/s3gw-tech/s3gw-remediation/test/longhornsim"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// poolLabel groups a spec's nodes for its NodeHealthCheck and FAR.
const poolLabel = "e2e.s3gw.io/pool"

// Deadlines, for compressed timings: NotReady after 10 s, NHC and eviction
// 10 s later. The attach-detach controller's 1-minute sync bounds the
// DeleteVolumeAttachment route.
const (
	crDeadline        = time.Minute
	recoveryDeadline  = 2 * time.Minute
	cleanupDeadline   = time.Minute
	stuckWindow       = 15 * time.Second
	fencingGateWindow = 15 * time.Second
)

// scenario is one spec's nodes: victims that fail and a spare the
// gateways move to, all in one zone of their own so that specs never share
// the node-lifecycle controller's per-zone eviction limiter or disruption
// state.
type scenario struct {
	name    string
	victims []string
	spare   string
	labels  map[string]string
}

func newScenario(ctx context.Context, name string, victims int) *scenario {
	s := &scenario{
		name:   name,
		spare:  name + "-spare",
		labels: map[string]string{poolLabel: name, harness.ZoneLabel: "zone-" + name},
	}
	for i := range victims {
		s.victims = append(s.victims, fmt.Sprintf("%s-%c", name, 'a'+i))
	}
	Expect(env.AddNodes(ctx, s.labels, append(slices.Clone(s.victims), s.spare)...)).To(Succeed())
	return s
}

func (s *scenario) namespace() string { return "s3gw-" + s.name }

// remediate creates the scenario's NodeHealthCheck and template.
func (s *scenario) remediate(ctx context.Context, spec s3gwv1alpha1.S3GWRemediationSpec) *nhc.Emulator {
	em, err := env.EnableRemediation(ctx, harness.Remediation{
		Name: s.name, NodeSelector: map[string]string{poolLabel: s.name}, Spec: spec,
	})
	Expect(err).NotTo(HaveOccurred())
	return em
}

// gateway deploys a release on a victim, movable to the spare.
func (s *scenario) gateway(ctx context.Context, release, node string, replicas ...string) *harness.Gateway {
	g, err := env.DeployGateway(ctx, harness.GatewaySpec{
		Namespace: s.namespace(), Release: release, Node: node,
		Failover: []string{s.spare}, ReplicaNodes: replicas,
	})
	Expect(err).NotTo(HaveOccurred())
	return g
}

// fail stops the gateways' nodes and logs each milestone.
func fail(ctx context.Context, gateways ...*harness.Gateway) []*harness.Run {
	runs, err := env.FailAll(ctx, gateways, func(r *harness.Run, m harness.Milestone, after time.Duration) {
		GinkgoWriter.Printf("  +%-7s %s: %s\n", harness.FormatDuration(after), r.Node, m)
	})
	Expect(err).NotTo(HaveOccurred())
	return runs
}

func report(r *harness.Run) {
	AddReportEntry("timeline of "+r.String(), r.Format())
	By("Timeline of " + r.String() + ":\n" + r.Format())
}

func remediationFor(ctx context.Context, node string) *s3gwv1alpha1.S3GWRemediation {
	rem, err := env.RemediationFor(ctx, node)
	Expect(err).NotTo(HaveOccurred())
	return rem
}

func haveCondition(t string, status metav1.ConditionStatus, reason string) OmegaMatcher {
	return ContainElement(And(HaveField("Type", t), HaveField("Status", status), HaveField("Reason", reason)))
}

// attachments lists the VolumeAttachments of the gateway's volume.
func attachments(ctx context.Context, g *harness.Gateway) []storagev1.VolumeAttachment {
	var vas storagev1.VolumeAttachmentList
	Expect(env.Client.List(ctx, &vas)).To(Succeed())
	var out []storagev1.VolumeAttachment
	for _, va := range vas.Items {
		if pv := va.Spec.Source.PersistentVolumeName; pv != nil && *pv == g.Volume.Name {
			out = append(out, va)
		}
	}
	return out
}

// expectAttachedOnlyTo checks both sides of the attachment: one attached
// VolumeAttachment, on node, and Longhorn tickets for node only.
func expectAttachedOnlyTo(ctx context.Context, g *harness.Gateway, node string) {
	vas := attachments(ctx, g)
	Expect(vas).To(HaveLen(1), "one VolumeAttachment for %s", g.Volume.Name)
	Expect(vas[0].Spec.NodeName).To(Equal(node))
	Expect(vas[0].Status.Attached).To(BeTrue())
	var lhva longhorn.VolumeAttachment
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: g.Volume.Name}, &lhva)).To(Succeed())
	Expect(lhva.Spec.AttachmentTickets).NotTo(BeEmpty())
	for id, t := range lhva.Spec.AttachmentTickets {
		Expect(t.NodeID).To(Equal(node), "Longhorn ticket %s", id)
	}
}

// expectStillAttachedTo is the stuck picture: the dead node's
// VolumeAttachment is attached and its kubelet still reports the volume in use.
func expectStillAttachedTo(g Gomega, ctx context.Context, gw *harness.Gateway, node string) {
	var va storagev1.VolumeAttachment
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: attachrules.AttachmentName(gw.Volume.Name, node)}, &va)).To(Succeed())
	g.Expect(va.Status.Attached).To(BeTrue())
	g.Expect(va.DeletionTimestamp.IsZero()).To(BeTrue())
	var n corev1.Node
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: node}, &n)).To(Succeed())
	g.Expect(n.Status.VolumesInUse).To(ContainElement(longhorn.UniqueVolumeName(gw.Volume.Name)))
}

func nodeHasTaint(ctx context.Context, node string, taint corev1.Taint) bool {
	var n corev1.Node
	Expect(env.Client.Get(ctx, client.ObjectKey{Name: node}, &n)).To(Succeed())
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
}

var (
	outOfServiceTaint = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
	farTaint          = far.RemediationTaint()
)

// expectMoved checks the end state of a remediated failover.
func expectMoved(ctx context.Context, r *harness.Run, spare string) *s3gwv1alpha1.S3GWRemediation {
	rem := expectReleasedTarget(ctx, r, spare)
	Expect(rem.Status.Targets[0].UID).To(Equal(r.OldUID))
	expectOrder(r, harness.RemediationCreated, harness.OldPodGone)
	return rem
}

// expectMovedAfterFAR is expectMoved for a gateway whose pod FAR deleted
// (ResourceDeletion) before the remediation existed: its target is the
// volume the pod left attached, and the remediation evicted nothing.
func expectMovedAfterFAR(ctx context.Context, r *harness.Run, spare string) *s3gwv1alpha1.S3GWRemediation {
	rem := expectReleasedTarget(ctx, r, spare)
	Expect(rem.Status.Targets[0].UID).To(BeEmpty(), "a target without a pod")
	Expect(rem.Status.Targets[0].Volumes).To(ConsistOf(HaveField("PersistentVolume", r.Gateway.Volume.Name)))
	expectOrder(r, harness.OldPodGone, harness.RemediationCreated)
	return rem
}

// expectReleasedTarget checks the end state of a remediated failover with
// one target, moved to spare.
func expectReleasedTarget(ctx context.Context, r *harness.Run, spare string) *s3gwv1alpha1.S3GWRemediation {
	_, newNode := r.Replacement()
	Expect(newNode).To(Equal(spare))
	expectAttachedOnlyTo(ctx, r.Gateway, spare)
	var old corev1.Pod
	Expect(apierrors.IsNotFound(env.Client.Get(ctx, r.OldPod, &old))).To(BeTrue(), "the old pod is gone from the API")

	rem := remediationFor(ctx, r.Node)
	Expect(rem).NotTo(BeNil())
	Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseSucceeded))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonRemediationFinished))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingEvidence))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionTrue, s3gwv1alpha1.ReasonEvicted))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, s3gwv1alpha1.ReasonReleased))
	Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionReplacementReady, metav1.ConditionTrue, s3gwv1alpha1.ReasonReplacementReady))
	Expect(rem.Status.Targets).To(HaveLen(1))
	Expect(rem.Status.Targets[0].State).To(Equal(s3gwv1alpha1.TargetReplaced))
	Expect(rem.Status.Targets[0].Replacement).To(HaveValue(HaveField("NodeName", spare)))
	Expect(rem.Finalizers).NotTo(BeEmpty())
	expectOrder(r, harness.NodeNotReady, harness.RemediationCreated)
	expectOrder(r, harness.AttachmentReleased, harness.ReplacementReady)
	expectOrder(r, harness.OldPodGone, harness.ReplacementReady)
	return rem
}

// expectOrder checks that milestone a was seen no later than b.
func expectOrder(r *harness.Run, a, b harness.Milestone) {
	ta, okA := r.Seen(a)
	tb, okB := r.Seen(b)
	Expect(okA && okB).To(BeTrue(), "%q and %q seen", a, b)
	Expect(ta).To(BeNumerically("<=", tb), "%q before %q", a, b)
}

// recoverAndExpectCleanup brings the node back and checks NHC's side of
// the contract: NHC deletes the CR, the operator removes what it added and
// then its finalizer, the CR goes and NHC releases the node's lease.
func recoverAndExpectCleanup(ctx context.Context, r *harness.Run, em *nhc.Emulator) {
	recoverAndExpectCleanupWithin(ctx, r, em, cleanupDeadline)
}

// recoverAndExpectCleanupWithin is recoverAndExpectCleanup for a CR that
// NHC deletes only later (healthyDelay): the CR must be gone within wait.
func recoverAndExpectCleanupWithin(ctx context.Context, r *harness.Run, em *nhc.Emulator, wait time.Duration) {
	By("Recovering node " + r.Node)
	Expect(env.Recover(ctx, r)).To(Succeed())
	Eventually(ctx, func() *s3gwv1alpha1.S3GWRemediation { return remediationFor(ctx, r.Node) }).
		WithTimeout(wait).WithPolling(100*time.Millisecond).Should(BeNil(), "NHC deleted the CR and the operator let it go")
	Eventually(ctx, func() bool {
		_, err := em.Lease(ctx, r.Node)
		return apierrors.IsNotFound(err)
	}).WithTimeout(cleanupDeadline).Should(BeTrue(), "NHC released the node lease")
}

// setTaint adds the taint to the node, or with nil removes the
// out-of-service taint, as an admin would with kubectl taint.
func setTaint(ctx context.Context, node string, taint *corev1.Taint) {
	Eventually(ctx, func() error {
		var n corev1.Node
		if err := env.Client.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
			return err
		}
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeOutOfService })
		if taint != nil {
			t := *taint
			t.TimeAdded = ptr.To(metav1.Now())
			n.Spec.Taints = append(n.Spec.Taints, t)
		}
		return env.Client.Update(ctx, &n)
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// farCRs names the node's FenceAgentsRemediations, in any namespace.
func farCRs(ctx context.Context, node string) []string {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(harness.FARAPIVersion)
	list.SetKind(harness.FARKind + "List")
	Expect(env.Client.List(ctx, list)).To(Succeed())
	var out []string
	for i := range list.Items {
		if far.NodeName(&list.Items[i]) == node {
			out = append(out, list.Items[i].GetNamespace()+"/"+list.Items[i].GetName())
		}
	}
	return out
}
