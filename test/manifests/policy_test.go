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

package manifests

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/medik8s/common/pkg/annotations"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// The manager's writes, as internal/fencing and internal/longhorn make
// them: merge patches optimistic-locked on the resourceVersion read.
var (
	outOfService = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
	unreachable  = corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	dedicated    = corev1.Taint{Key: "dedicated", Value: "storage", Effect: corev1.TaintEffectNoSchedule}
)

const (
	inUseA = corev1.UniqueVolumeName("kubernetes.io/csi/driver.longhorn.io^pvc-a")
	inUseB = corev1.UniqueVolumeName("kubernetes.io/csi/driver.longhorn.io^pvc-b")
)

var _ = Describe("The manager's admission policies (config/policy)", Ordered, func() {
	// Two installs of the manager, in different namespaces: the policies
	// match the service account whatever its namespace.
	users := []string{testenv.ManagerUser, "system:serviceaccount:openshift-workload-availability:s3gw-remediation-controller-manager"}
	managers := map[string]client.Client{}

	BeforeAll(func() {
		role := &rbacv1.ClusterRole{}
		load("config/rbac/role.yaml", role)
		role.Name = "policy-test-manager-role"
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		for i, user := range users {
			Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("policy-test-manager-%d", i)},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
			})).To(Succeed())
			impersonated := rest.CopyConfig(cfg)
			impersonated.Impersonate = rest.ImpersonationConfig{UserName: user}
			c, err := client.New(impersonated, client.Options{Scheme: env.Scheme})
			Expect(err).NotTo(HaveOccurred())
			managers[user] = c
		}
		Expect(testenv.InstallManagerPolicy(ctx, k8sClient, managers[testenv.ManagerUser])).To(Succeed())
	})

	It("compare every NodeSpec field but taints and every NodeStatus field but volumesInUse", func() {
		objs, err := testenv.ManagerPolicy()
		Expect(err).NotTo(HaveOccurred())
		var text strings.Builder
		for _, obj := range objs {
			validations, _, _ := unstructured.NestedSlice(obj.Object, "spec", "validations")
			for _, v := range validations {
				text.WriteString(v.(map[string]any)["expression"].(string))
			}
		}
		for prefix, typ := range map[string]reflect.Type{"spec": reflect.TypeFor[corev1.NodeSpec](), "status": reflect.TypeFor[corev1.NodeStatus]()} {
			for f := range typ.Fields() {
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "taints" || name == "volumesInUse" {
					continue
				}
				compared := fmt.Sprintf("object.%s.?%s == oldObject.%s.?%s", prefix, name, prefix, name)
				Expect(text.String()).To(ContainSubstring(compared), "Node %s.%s is new: add it to %s", prefix, name, testenv.PolicyDir)
			}
		}
	})

	for _, user := range users {
		Context("as "+user, func() {
			var node *corev1.Node
			var manager client.Client

			BeforeEach(func() {
				manager = managers[user]
				node = failedNode()
			})

			It("allows removing entries from status.volumesInUse", func() {
				Expect(patchStatus(manager, node, func(n *corev1.Node) { n.Status.VolumesInUse = []corev1.UniqueVolumeName{inUseB} })).To(Succeed())
				Expect(patchStatus(manager, node, func(n *corev1.Node) { n.Status.VolumesInUse = nil })).To(Succeed())
			})

			It("allows adding and removing the out-of-service taint with its owner annotation", func() {
				owner := types.UID("0b4e9a6c-remediation")
				added, err := attachments.AddOwnedTaint(ctx, manager, node, outOfService, owner, metav1.Now())
				Expect(err).NotTo(HaveOccurred())
				Expect(added).To(BeTrue())
				Expect(attachments.TaintOwner(node, outOfService)).To(Equal(owner))
				Expect(attachments.RemoveOwnedTaint(ctx, manager, node, outOfService, owner)).To(Succeed())
				Expect(attachments.HasTaint(node, outOfService)).To(BeFalse())
				Expect(node.Annotations).NotTo(HaveKey(attachments.TaintOwnerAnnotation))
			})

			It("adds and removes the taint from the cache's trimmed copy and leaves every other annotation", func() {
				Expect(patchSpec(k8sClient, node, func(n *corev1.Node) {
					metav1.SetMetaDataAnnotation(&n.ObjectMeta, "example.com/kept", "yes")
				})).To(Succeed())
				owner := types.UID("0b4e9a6c-remediation")
				added, err := attachments.AddOwnedTaint(ctx, manager, cachedCopy(node), outOfService, owner, metav1.Now())
				Expect(err).NotTo(HaveOccurred())
				Expect(added).To(BeTrue())
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
				Expect(attachments.TaintOwner(node, outOfService)).To(Equal(owner))

				Expect(attachments.RemoveOwnedTaint(ctx, manager, cachedCopy(node), outOfService, owner)).To(Succeed())
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
				Expect(attachments.HasTaint(node, outOfService)).To(BeFalse())
				Expect(node.Spec.Taints).To(ContainElements(unreachable, dedicated), "the taints it does not own stay")
				Expect(node.Annotations).To(Equal(map[string]string{"example.com/kept": "yes"}))
			})

			It("allows removing an owner annotation whose taint someone else removed, from the cache's trimmed copy", func() {
				Expect(patchSpec(k8sClient, node, func(n *corev1.Node) {
					n.Annotations = map[string]string{attachments.TaintOwnerAnnotation: "0b4e9a6c-remediation", "example.com/kept": "yes"}
				})).To(Succeed())
				Expect(attachments.DropStaleTaintOwner(ctx, manager, cachedCopy(node), outOfService)).To(Succeed())
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
				Expect(node.Annotations).To(Equal(map[string]string{"example.com/kept": "yes"}))
				Expect(node.Spec.Taints).To(ContainElements(unreachable, dedicated), "the taints stay")
			})

			It("allows deleting a Longhorn VolumeAttachment", func() {
				va := attachment(node.Name, "driver.longhorn.io")
				Expect(manager.Delete(ctx, va, client.Preconditions{UID: &va.UID})).To(Succeed())
			})

			DescribeTable("refuses every other node write",
				func(status bool, mutate func(*corev1.Node), message string) {
					patch := patchSpec
					if status {
						patch = patchStatus
					}
					err := patch(manager, node, mutate)
					Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
					Expect(err.Error()).To(ContainSubstring(message))
					var after corev1.Node
					Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(node), &after)).To(Succeed())
					Expect(after.ResourceVersion).To(Equal(node.ResourceVersion), "the node is unchanged")
				},
				Entry("changing a node condition", true, func(n *corev1.Node) {
					n.Status.Conditions[0].Status = corev1.ConditionTrue
				}, "no field of a node's status but volumesInUse"),
				Entry("removing a volume and changing a condition at once", true, func(n *corev1.Node) {
					n.Status.VolumesInUse = []corev1.UniqueVolumeName{inUseB}
					n.Status.Conditions[0].Reason = "Fenced"
				}, "no field of a node's status but volumesInUse"),
				Entry("adding an entry to status.volumesInUse", true, func(n *corev1.Node) {
					n.Status.VolumesInUse = append(n.Status.VolumesInUse, "kubernetes.io/csi/driver.longhorn.io^pvc-c")
				}, "only remove entries from a node's status.volumesInUse"),
				Entry("removing another taint", false, func(n *corev1.Node) {
					n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&unreachable) })
				}, "only add or remove the node.kubernetes.io/out-of-service:NoExecute taint"),
				Entry("adding another taint", false, func(n *corev1.Node) {
					n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "example.com/fenced", Effect: corev1.TaintEffectNoExecute})
				}, "only add or remove the node.kubernetes.io/out-of-service:NoExecute taint"),
				Entry("adding the out-of-service key with another effect", false, func(n *corev1.Node) {
					n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Effect: corev1.TaintEffectNoSchedule})
				}, "only add or remove the node.kubernetes.io/out-of-service:NoExecute taint"),
				Entry("changing another taint's value", false, func(n *corev1.Node) {
					n.Spec.Taints[1].Value = "anything"
				}, "only add or remove the node.kubernetes.io/out-of-service:NoExecute taint"),
				Entry("cordoning the node", false, func(n *corev1.Node) {
					n.Spec.Unschedulable = true
				}, "no field of a node's spec but its taints"),
				Entry("labelling the node", false, func(n *corev1.Node) {
					n.Labels["node-role.kubernetes.io/fenced"] = ""
				}, "may not change a node's labels"),
				Entry("annotating the node", false, func(n *corev1.Node) {
					n.Annotations = map[string]string{"example.com/fenced": "true"}
				}, "may not change a node's labels, annotations"),
				Entry("annotating the node along with the taint owner", false, func(n *corev1.Node) {
					n.Spec.Taints = append(n.Spec.Taints, outOfService)
					n.Annotations = map[string]string{attachments.TaintOwnerAnnotation: "x", "example.com/fenced": "true"}
				}, "may not change a node's labels, annotations"),
				Entry("setting the taint owner through the status", true, func(n *corev1.Node) {
					n.Annotations = map[string]string{attachments.TaintOwnerAnnotation: "x"}
				}, "may not change a node's labels, annotations"),
				Entry("adding a finalizer", false, func(n *corev1.Node) {
					n.Finalizers = append(n.Finalizers, "example.com/hold")
				}, "may not change a node's labels, annotations, finalizers"),
			)

			It("allows creating, annotating and deleting the fencer CRs it marked, in any namespace", func() {
				rem := delegatingRemediation()
				d := fencing.Delegate{Client: manager, Live: manager}
				name, err := d.Create(ctx, rem, node.Name)
				Expect(err).NotTo(HaveOccurred())
				Expect(name).To(HavePrefix(fencerNamespace + "/" + node.Name))
				rem.Annotations = map[string]string{annotations.NhcTimedOut: "2026-12-01T21:00:00Z"}
				Expect(d.MarkTimedOut(ctx, rem)).To(Succeed())
				crs := fencerCRs(fencing.RemediationUIDLabel, string(rem.UID))
				Expect(crs).To(HaveLen(1))
				Expect(crs[0].GetAnnotations()).To(HaveKey(annotations.NhcTimedOut))
				Expect(d.Delete(ctx, rem)).To(Succeed())
				Expect(fencerCRs(fencing.RemediationUIDLabel, string(rem.UID))).To(BeEmpty())
			})

			DescribeTable("refuses every other fencer CR write",
				func(write func(manager client.Client, marked, unmarked *unstructured.Unstructured) error, message string) {
					marked, unmarked := fencerCR(true), fencerCR(false)
					err := write(manager, marked, unmarked)
					Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
					Expect(err.Error()).To(ContainSubstring(message))
					for _, cr := range []*unstructured.Unstructured{marked, unmarked} {
						after := cr.DeepCopy()
						Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(cr), after)).To(Succeed())
						Expect(after.GetResourceVersion()).To(Equal(cr.GetResourceVersion()), "%s is unchanged", cr.GetName())
					}
				},
				Entry("creating one without the marker", func(m client.Client, _, unmarked *unstructured.Unstructured) error {
					cr := fencerObject(false)
					cr.SetName(unmarked.GetName() + "-new")
					return m.Create(ctx, cr)
				}, "only create fencer CRs labelled s3gw-remediation.medik8s.io/remediation-uid"),
				Entry("annotating one it did not create", func(m client.Client, _, unmarked *unstructured.Unstructured) error {
					return patchFencer(m, unmarked, func(cr *unstructured.Unstructured) {
						cr.SetAnnotations(map[string]string{annotations.NhcTimedOut: "now"})
					})
				}, "only change or delete fencer CRs labelled"),
				Entry("marking one it did not create as its own", func(m client.Client, _, unmarked *unstructured.Unstructured) error {
					return patchFencer(m, unmarked, func(cr *unstructured.Unstructured) {
						cr.SetLabels(map[string]string{fencing.RemediationUIDLabel: "0b4e9a6c-remediation"})
					})
				}, "only change or delete fencer CRs labelled"),
				Entry("deleting one it did not create", func(m client.Client, _, unmarked *unstructured.Unstructured) error {
					return m.Delete(ctx, unmarked)
				}, "only change or delete fencer CRs labelled"),
				Entry("removing the marker of its own", func(m client.Client, marked, _ *unstructured.Unstructured) error {
					return patchFencer(m, marked, func(cr *unstructured.Unstructured) { cr.SetLabels(nil) })
				}, "change only the annotations of a fencer CR it created"),
				Entry("changing the spec of its own", func(m client.Client, marked, _ *unstructured.Unstructured) error {
					return patchFencer(m, marked, func(cr *unstructured.Unstructured) {
						Expect(unstructured.SetNestedField(cr.Object, "fence_ipmilan", "spec", "agent")).To(Succeed())
					})
				}, "change only the annotations of a fencer CR it created"),
			)

			It("allows removing the failed node's csi-attacher ticket from Longhorn's VolumeAttachment", func() {
				lva := longhornAttachment(node.Name)
				removed, err := attachments.RemoveCSITickets(ctx, manager, lva.Namespace, lva.Name, node.Name, []string{"csi-failed"})
				Expect(err).NotTo(HaveOccurred())
				Expect(removed).To(Equal(1))
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lva), lva)).To(Succeed())
				Expect(lva.Spec.AttachmentTickets).To(HaveLen(2))
				Expect(lva.Spec.AttachmentTickets).NotTo(HaveKey("csi-failed"))
				again, err := attachments.RemoveCSITickets(ctx, manager, lva.Namespace, lva.Name, node.Name, []string{"csi-failed"})
				Expect(err).NotTo(HaveOccurred())
				Expect(again).To(BeZero(), "a repeated pass writes nothing")
			})

			DescribeTable("refuses every other Longhorn VolumeAttachment write",
				func(mutate func(*longhorn.VolumeAttachment), message string) {
					lva := longhornAttachment(node.Name)
					patch := client.MergeFrom(lva.DeepCopy())
					mutate(lva)
					err := manager.Patch(ctx, lva, patch)
					Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
					Expect(err.Error()).To(ContainSubstring(message))
					after := &longhorn.VolumeAttachment{}
					Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lva), after)).To(Succeed())
					Expect(after.Spec.AttachmentTickets).To(HaveLen(3), "every ticket stays")
				},
				Entry("removing another requester's ticket", func(lva *longhorn.VolumeAttachment) {
					delete(lva.Spec.AttachmentTickets, "longhorn-ui")
				}, "may only remove csi-attacher tickets"),
				Entry("adding a ticket", func(lva *longhorn.VolumeAttachment) {
					lva.Spec.AttachmentTickets["hold"] = &longhorn.AttachmentTicket{ID: "hold", Type: "longhorn-api", NodeID: "worker-9"}
				}, "may not add or change a Longhorn attachment ticket"),
				Entry("moving a csi-attacher ticket to another node", func(lva *longhorn.VolumeAttachment) {
					lva.Spec.AttachmentTickets["csi-failed"].NodeID = "worker-9"
				}, "may not add or change a Longhorn attachment ticket"),
				Entry("removing a ticket and labelling the object", func(lva *longhorn.VolumeAttachment) {
					delete(lva.Spec.AttachmentTickets, "csi-failed")
					lva.Labels = map[string]string{"example.com/held": "true"}
				}, "may change nothing of a Longhorn VolumeAttachment but its csi-attacher tickets"),
			)

			It("refuses to delete a VolumeAttachment of another driver", func() {
				va := attachment(node.Name, "ebs.csi.aws.com")
				err := manager.Delete(ctx, va)
				Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
				Expect(err.Error()).To(ContainSubstring("only delete VolumeAttachments of driver.longhorn.io"))
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(va), va)).To(Succeed())
			})
		})
	}

	It("leaves other users alone", func() {
		node := failedNode()
		Expect(patchSpec(k8sClient, node, func(n *corev1.Node) {
			n.Labels["example.com/inspected"] = "true"
			n.Spec.Taints = nil
		})).To(Succeed())
		Expect(patchStatus(k8sClient, node, func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionTrue })).To(Succeed())
		va := attachment(node.Name, "ebs.csi.aws.com")
		Expect(k8sClient.Delete(ctx, va)).To(Succeed())
	})
})

// fencerNamespace is where the fencer's templates and CRs live.
const fencerNamespace = "policy-fencer"

// longhornNamespace holds the Longhorn VolumeAttachments the policy tests write.
const longhornNamespace = "longhorn-system"

// delegatingRemediation is a remediation whose delegate template is in
// fencerNamespace, with the template there. It is not created: the
// manager's delegate writes need only its name and UID.
func delegatingRemediation() *s3gwv1alpha1.S3GWRemediation {
	ensureNamespace(fencerNamespace)
	template := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"agent": "fence_dummy"}}}}}
	template.SetAPIVersion(farAPIVersion)
	template.SetKind("FenceAgentsRemediationTemplate")
	template.SetNamespace(fencerNamespace)
	template.SetName("far")
	template.SetAnnotations(map[string]string{annotations.MultipleTemplatesSupportedAnnotation: "true"})
	if err := k8sClient.Create(ctx, template); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	return &s3gwv1alpha1.S3GWRemediation{
		ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw", Name: "policy", UID: types.UID(rand.String(12))},
		Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
			Delegate: &s3gwv1alpha1.DelegateFencing{APIVersion: farAPIVersion, Kind: "FenceAgentsRemediationTemplate",
				Name: "far", Namespace: fencerNamespace}}},
	}
}

const farAPIVersion = "fence-agents-remediation.medik8s.io/v1alpha1"

// fencerObject is a FenceAgentsRemediation in fencerNamespace, with the
// manager's marker or without.
func fencerObject(marked bool) *unstructured.Unstructured {
	cr := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"agent": "fence_dummy"}}}
	cr.SetAPIVersion(farAPIVersion)
	cr.SetKind("FenceAgentsRemediation")
	cr.SetNamespace(fencerNamespace)
	cr.SetName("policy-" + rand.String(6))
	if marked {
		cr.SetLabels(map[string]string{fencing.RemediationUIDLabel: "0b4e9a6c-remediation"})
	}
	return cr
}

// fencerCR creates a fencerObject as the admin.
func fencerCR(marked bool) *unstructured.Unstructured {
	ensureNamespace(fencerNamespace)
	cr := fencerObject(marked)
	Expect(k8sClient.Create(ctx, cr)).To(Succeed())
	return cr
}

// fencerCRs lists the FenceAgentsRemediations with the label.
func fencerCRs(key, value string) []unstructured.Unstructured {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(farAPIVersion)
	list.SetKind("FenceAgentsRemediationList")
	Expect(k8sClient.List(ctx, list, client.MatchingLabels{key: value})).To(Succeed())
	return list.Items
}

// patchFencer sends the change as an optimistic-locked merge patch.
func patchFencer(c client.Client, cr *unstructured.Unstructured, mutate func(*unstructured.Unstructured)) error {
	changed := cr.DeepCopy()
	mutate(changed)
	return c.Patch(ctx, changed, client.MergeFromWithOptions(cr, client.MergeFromWithOptimisticLock{}))
}

func ensureNamespace(name string) {
	err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

// failedNode creates a node as the manager finds a failed one: Ready
// Unknown, tainted unreachable and by its admin, with two volumes in use.
// cachedCopy is the node as the manager's cache holds it: trimmed by
// controllers.CacheOptions' transform for nodes.
func cachedCopy(node *corev1.Node) *corev1.Node {
	for obj, by := range controllers.CacheOptions(labels.Everything()).ByObject {
		if _, ok := obj.(*corev1.Node); ok {
			trimmed, err := by.Transform(node.DeepCopy())
			Expect(err).NotTo(HaveOccurred())
			return trimmed.(*corev1.Node)
		}
	}
	Fail("the manager caches no nodes")
	return nil
}

func failedNode() *corev1.Node {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "policy-", Labels: map[string]string{"kubernetes.io/os": "linux"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{unreachable, dedicated}},
	}
	Expect(k8sClient.Create(ctx, node)).To(Succeed())
	node.Status = corev1.NodeStatus{
		Conditions:   []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown"}},
		VolumesInUse: []corev1.UniqueVolumeName{inUseA, inUseB},
	}
	Expect(k8sClient.Status().Update(ctx, node)).To(Succeed())
	return node
}

func attachment(node, attacher string) *storagev1.VolumeAttachment {
	pv := "pv-" + node
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "policy-"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: attacher, NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
	}
	Expect(k8sClient.Create(ctx, va)).To(Succeed())
	return va
}

// patchSpec and patchStatus send the change as an optimistic-locked merge
// patch of the node read last; on success node is the new state.
func patchSpec(c client.Client, node *corev1.Node, mutate func(*corev1.Node)) error {
	return patchNode(c.Patch, node, mutate)
}

func patchStatus(c client.Client, node *corev1.Node, mutate func(*corev1.Node)) error {
	return patchNode(func(ctx context.Context, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
		return c.Status().Patch(ctx, obj, patch)
	}, node, mutate)
}

type patchFunc func(context.Context, client.Object, client.Patch, ...client.PatchOption) error

func patchNode(patch patchFunc, node *corev1.Node, mutate func(*corev1.Node)) error {
	changed := node.DeepCopy()
	mutate(changed)
	if err := patch(ctx, changed, client.MergeFromWithOptions(node, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	*node = *changed
	return nil
}

// longhornAttachment creates, as the admin, a Longhorn VolumeAttachment with
// the failed node's csi-attacher ticket, another requester's ticket for it,
// and the replacement's csi-attacher ticket for another node.
func longhornAttachment(node string) *longhorn.VolumeAttachment {
	ensureNamespace(longhornNamespace)
	name := "pvc-" + rand.String(6)
	lva := &longhorn.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Namespace: longhornNamespace, Name: name},
		Spec: longhorn.VolumeAttachmentSpec{Volume: name, AttachmentTickets: map[string]*longhorn.AttachmentTicket{
			"csi-failed":  {ID: "csi-failed", Type: longhorn.TicketTypeCSIAttacher, NodeID: node},
			"longhorn-ui": {ID: "longhorn-ui", Type: "longhorn-api", NodeID: node},
			"csi-new":     {ID: "csi-new", Type: longhorn.TicketTypeCSIAttacher, NodeID: "worker-9"},
		}},
	}
	Expect(k8sClient.Create(ctx, lva)).To(Succeed())
	return lva
}
