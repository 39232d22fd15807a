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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/prepull"
	internalprepull "github.com/s3gw-tech/s3gw-remediation/internal/prepull"
)

const prePullImage = "quay.io/s3gw/s3gw-remediation:v0.1.0"

// prePullStory runs the pre-pull reconciler pass by pass as the manager's
// service account (so the generated RBAC and config/policy's admission
// policies are proven too), on the story's namespace only: the reconciler
// serves every template in the cluster, and other stories leave theirs.
type prePullStory struct {
	w        *world
	r        *PrePullReconciler
	c        client.Client
	recorder *record.FakeRecorder
}

func newPrePullStory(w *world) *prePullStory {
	c := client.NewNamespacedClient(managerClient, w.ns)
	recorder := record.NewFakeRecorder(100)
	return &prePullStory{w: w, c: c, recorder: recorder, r: &PrePullReconciler{Client: c, APIReader: c, PrePull: c,
		WorkloadCache: DefaultWorkloadCache(), ProgramImage: prePullImage, Recorder: recorder, Clock: w.clock}}
}

// pass runs one pass, which must succeed, and returns when it asks to run
// again (zero: only on an event).
func (s *prePullStory) pass() time.Duration {
	res, err := s.r.Reconcile(s.w.ctx, prepull.Request)
	Expect(err).NotTo(HaveOccurred())
	return res.RequeueAfter
}

// daemonSets are the story's DaemonSets, by name.
func (s *prePullStory) daemonSets() map[string]appsv1.DaemonSet {
	list := &appsv1.DaemonSetList{}
	Expect(s.w.c.List(s.w.ctx, list, client.InNamespace(s.w.ns))).To(Succeed())
	out := map[string]appsv1.DaemonSet{}
	for _, ds := range list.Items {
		out[ds.Name] = ds
	}
	return out
}

// only returns the one DaemonSet.
func (s *prePullStory) only() appsv1.DaemonSet {
	all := s.daemonSets()
	Expect(all).To(HaveLen(1))
	for _, ds := range all {
		return ds
	}
	return appsv1.DaemonSet{}
}

// prePullTemplate creates a template selecting the story's pods, with
// pre-pull on.
func (w *world) prePullTemplate(name string) *s3gwv1alpha1.S3GWRemediationTemplate {
	t := &s3gwv1alpha1.S3GWRemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: s3gwv1alpha1.S3GWRemediationTemplateSpec{
			Template: s3gwv1alpha1.S3GWRemediationTemplateResource{Spec: s3gwv1alpha1.S3GWRemediationSpec{Namespaces: []string{w.ns}}},
			PrePull:  s3gwv1alpha1.PrePullSpec{Enabled: true}}}
	Expect(w.c.Create(w.ctx, t)).To(Succeed())
	return t
}

func (w *world) setPrePull(t *s3gwv1alpha1.S3GWRemediationTemplate, enabled bool) {
	Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
	t.Spec.PrePull.Enabled = enabled
	Expect(w.c.Update(w.ctx, t)).To(Succeed())
}

// notOn is the pre-pull pods' required node affinity: the gateway's nodes
// but node.
func notOn(node string) []corev1.NodeSelectorTerm {
	return []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}}}}
}

func affinityOf(ds appsv1.DaemonSet) []corev1.NodeSelectorTerm {
	return ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
}

var _ = Describe("The pre-pull DaemonSets", func() {
	It("keep one per gateway away from its node, follow its image and its moves, and go with the setting and the template", func() {
		s := newPrePullStory(newWorld(suiteCtx))
		w := s.w
		w.addNode("a", true)
		w.addNode("b", true)
		g := w.addGateway("gw", "a", "b")
		t := w.prePullTemplate("s3gw")

		s.pass()
		ds := s.only()
		Expect(ds.Name).To(Equal("gw-s3gw-5d9f-replicaset-prepull"), "the world's pods lack pod-template-hash: a bare ReplicaSet's")
		Expect(ds.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "ReplicaSet"), HaveField("UID", g.rs.UID))),
			"the garbage collector deletes it with the gateway")
		Expect(ds.Spec.Template.Annotations).To(HaveKeyWithValue(internalprepull.ImagesAnnotation, "quay.io/s3gw/s3gw"))
		Expect(ds.Annotations).To(HaveKeyWithValue(internalprepull.TemplatesAnnotation, w.ns+"/s3gw"))
		Expect(affinityOf(ds)).To(Equal(notOn(g.node)))
		Expect(ds.Spec.Template.Spec.InitContainers).To(HaveLen(2))
		Expect(ds.Spec.Template.Spec.Containers[0].Image).To(Equal(prePullImage))

		By("Writing nothing when nothing changed")
		s.pass()
		Expect(s.only().ResourceVersion).To(Equal(ds.ResourceVersion))

		By("An upgrade: the gateway's image changes")
		Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(g.pod), g.pod)).To(Succeed())
		g.pod.Spec.Containers[0].Image = "quay.io/s3gw/s3gw:v0.99"
		Expect(w.c.Update(w.ctx, g.pod)).To(Succeed())
		s.pass()
		ds = s.only()
		Expect(ds.Spec.Template.Annotations).To(HaveKeyWithValue(internalprepull.ImagesAnnotation, "quay.io/s3gw/s3gw:v0.99"),
			"within one pass")
		Expect(ds.Spec.Template.Spec.InitContainers[1].Image).To(Equal("quay.io/s3gw/s3gw:v0.99"))

		By("A failover: the old pod force-deleted, the ReplicaSet's replacement not created yet")
		Expect(w.c.Delete(w.ctx, g.pod, client.GracePeriodSeconds(0))).To(Succeed())
		Expect(s.pass()).To(Equal(prepull.DefaultGrace), "kept, and looked at again when its grace ends")
		Expect(s.only().ResourceVersion).To(Equal(ds.ResourceVersion))

		By("The replacement created, not scheduled yet")
		replacement := w.addPendingPod(g, "gw-s3gw-5d9f-new", "", g.pod.Labels)
		Expect(s.pass()).To(BeZero())
		Expect(s.only().ResourceVersion).To(Equal(ds.ResourceVersion), "kept as it is while the gateway is between nodes")

		By("The replacement on b: b is left out, a is a candidate again")
		Expect(w.c.Delete(w.ctx, replacement, client.GracePeriodSeconds(0))).To(Succeed())
		w.addPendingPod(g, "gw-s3gw-5d9f-moved", w.nodeName("b"), g.pod.Labels)
		s.pass()
		Expect(affinityOf(s.only())).To(Equal(notOn(w.nodeName("b"))))

		By("Turning pre-pull off")
		w.setPrePull(t, false)
		s.pass()
		Expect(s.daemonSets()).To(BeEmpty())

		By("Turning it on again, then deleting the template")
		w.setPrePull(t, true)
		s.pass()
		Expect(s.daemonSets()).To(HaveLen(1))
		Expect(w.c.Delete(w.ctx, t)).To(Succeed())
		s.pass()
		Expect(s.daemonSets()).To(BeEmpty())
	})

	It("go when their gateway stays without a pod for the grace", func() {
		s := newPrePullStory(newWorld(suiteCtx))
		w := s.w
		w.addNode("a", true)
		w.addNode("b", true)
		g := w.addGateway("gw", "a", "b")
		w.prePullTemplate("s3gw")
		s.pass()
		Expect(s.daemonSets()).To(HaveLen(1))

		Expect(w.c.Delete(w.ctx, g.pod, client.GracePeriodSeconds(0))).To(Succeed())
		Expect(s.pass()).To(Equal(prepull.DefaultGrace))
		w.clock.Step(prepull.DefaultGrace / 2)
		Expect(s.pass()).To(Equal(prepull.DefaultGrace/2), "the grace counts from the first pass that saw no pod")
		Expect(s.daemonSets()).To(HaveLen(1))
		w.clock.Step(prepull.DefaultGrace / 2)
		Expect(s.pass()).To(BeZero())
		Expect(s.daemonSets()).To(BeEmpty(), "scaled to zero, or gone: the garbage collector would have deleted it too")
	})

	It("share one DaemonSet between the templates that select a gateway, with the first template's settings", func() {
		s := newPrePullStory(newWorld(suiteCtx))
		w := s.w
		w.addNode("a", true)
		w.addNode("b", true)
		w.addGateway("gw", "a", "b")
		first := w.prePullTemplate("a-escalation-step")
		first.Spec.PrePull.Mechanism = s3gwv1alpha1.PrePullImageVolume
		Expect(w.c.Update(w.ctx, first)).To(Succeed())
		w.prePullTemplate("b-escalation-step")

		s.pass()
		ds := s.only()
		Expect(ds.Annotations).To(HaveKeyWithValue(internalprepull.TemplatesAnnotation, w.ns+"/a-escalation-step,"+w.ns+"/b-escalation-step"))
		Expect(ds.Spec.Template.Spec.Volumes).To(ConsistOf(HaveField("Image.Reference", "quay.io/s3gw/s3gw")),
			"the image volume of the first template's mechanism")

		w.setPrePull(first, false)
		s.pass()
		ds = s.only()
		Expect(ds.Annotations).To(HaveKeyWithValue(internalprepull.TemplatesAnnotation, w.ns+"/b-escalation-step"))
		Expect(ds.Spec.Template.Spec.InitContainers).To(HaveLen(2), "the second template's mechanism: init containers")
	})

	It("leave out pods nothing replaces, and DaemonSets the operator did not write", func() {
		s := newPrePullStory(newWorld(suiteCtx))
		w := s.w
		w.addNode("a", true)
		w.addNode("b", true)
		g := w.addGateway("gw", "a", "b")
		Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(g.pod), g.pod)).To(Succeed())
		g.pod.OwnerReferences = nil // a bare pod: no replacement to warm for
		Expect(w.c.Update(w.ctx, g.pod)).To(Succeed())
		foreign := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "someone-elses",
			Labels: map[string]string{internalprepull.Label: "someone-elses"}},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
		Expect(k8sClient.Create(w.ctx, foreign)).To(Succeed())
		w.prePullTemplate("s3gw")

		s.pass()
		Expect(s.daemonSets()).To(HaveLen(1))
		Expect(s.daemonSets()).To(HaveKey("someone-elses"), "not labelled app.kubernetes.io/managed-by: s3gw-remediation")
	})

	It("warn the template, and write nothing, while the manager does not know its own image", func() {
		s := newPrePullStory(newWorld(suiteCtx))
		w := s.w
		w.addNode("a", true)
		w.addNode("b", true)
		w.addGateway("gw", "a", "b")
		w.prePullTemplate("s3gw")
		s.r.ProgramImage = ""

		s.pass()
		Expect(s.daemonSets()).To(BeEmpty())
		Expect(s.recorder.Events).To(Receive(ContainSubstring(prepull.EventPrePullUnavailable + " Pre-pulling nothing")))
	})

	It("never write a DaemonSet the admission policy refuses", func() {
		s := newPrePullStory(newWorld(suiteCtx))
		w := s.w
		// A DaemonSet without the label, as a manager bent on something
		// else would write it.
		stray := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "stray"},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
		err := s.c.Create(w.ctx, stray)
		Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	})
})
