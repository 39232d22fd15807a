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
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/testenv"
)

// startEnv starts envtest for one test and returns an admin client.
func startEnv(t *testing.T) client.Client {
	started, err := testenv.Start()
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = started.Env.Stop() })
	return started.Client
}

// TestControllerFollowsTheContract drives the emulator's controller through
// a node's life: unhealthy long enough → a CR built as NHC builds it; past
// the lease deadline → timed out; Ready again → deleted.
func TestControllerFollowsTheContract(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := startEnv(t)

	template := &s3gwv1alpha1.S3GWRemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: "s3gw", Namespace: "default"}}
	g.Expect(c.Create(ctx, template)).To(Succeed())
	clock := clocktesting.NewFakeClock(time.Now())
	e := &Emulator{Client: c, Name: "workers", Clock: clock, Timeout: time.Minute,
		Template: TemplateRef{APIVersion: s3gwv1alpha1.GroupVersion.String(), Kind: "S3GWRemediationTemplate",
			Namespace: "default", Name: "s3gw"}}
	g.Expect(e.CreateNodeHealthCheck(ctx, c)).To(Succeed())
	var created []string
	ctrl := &Controller{Emulator: e, Nodes: c, UnhealthyDuration: 30 * time.Second,
		OnCreate: func(_, name string) { created = append(created, name) }}

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}
	g.Expect(c.Create(ctx, node)).To(Succeed())
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
		LastTransitionTime: metav1.NewTime(clock.Now())}}
	g.Expect(c.Status().Update(ctx, node)).To(Succeed())
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: node.Name}}

	res, err := ctrl.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeNumerically("~", 30*time.Second, time.Second), "not unhealthy long enough yet")
	g.Expect(e.ForNode(ctx, node.Name)).To(BeEmpty())

	clock.Step(31 * time.Second)
	_, err = ctrl.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	crs, err := e.ForNode(ctx, node.Name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(crs).To(HaveLen(1))
	cr := crs[0]
	g.Expect(cr.GetName()).To(Equal("worker-1"), "named after the node without multiple-templates support")
	g.Expect(cr.GetAnnotations()).To(Equal(map[string]string{
		"remediation.medik8s.io/node-name": "worker-1", TemplateNameAnnotation: "s3gw"}))
	g.Expect(cr.GetLabels()).To(Equal(map[string]string{PartOfLabel: PartOfValue}))
	g.Expect(cr.GetOwnerReferences()).To(ConsistOf(And(
		HaveField("Kind", "NodeHealthCheck"), HaveField("Name", "workers"), HaveField("Controller", HaveValue(BeFalse())))))
	g.Expect(cr.GetFinalizers()).To(BeEmpty())
	g.Expect(created).To(Equal([]string{"worker-1"}))
	lease, err := e.Lease(ctx, node.Name)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal("NodeHealthCheck-workers")))

	// A second pass finds the CR instead of creating another.
	_, err = ctrl.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.ForNode(ctx, node.Name)).To(HaveLen(1))
	g.Expect(created).To(HaveLen(1))

	// Past acquireTime + 3 × timeout, classic NHC marks the CR timed out.
	clock.Step(3 * time.Minute)
	_, err = ctrl.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	timedOut := &unstructured.Unstructured{}
	timedOut.SetGroupVersionKind(s3gwv1alpha1.GroupVersion.WithKind("S3GWRemediation"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(&cr), timedOut)).To(Succeed())
	g.Expect(timedOut.GetAnnotations()).To(HaveKey("remediation.medik8s.io/nhc-timed-out"))

	// Ready again: the CR and the lease go.
	node.Status.Conditions[0].Status = corev1.ConditionTrue
	g.Expect(c.Status().Update(ctx, node)).To(Succeed())
	_, err = ctrl.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.ForNode(ctx, node.Name)).To(BeEmpty())
	_, err = e.Lease(ctx, node.Name)
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	g.Expect(err).To(HaveOccurred(), "the lease is released once no CR is left")
}

// TestRemediateUsesGenerateNameWithMultipleTemplatesSupport checks NHC's
// naming rule for templates carrying the annotation.
func TestRemediateUsesGenerateNameWithMultipleTemplatesSupport(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := startEnv(t)

	template := &s3gwv1alpha1.S3GWRemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: "multi", Namespace: "default",
		Annotations: map[string]string{"remediation.medik8s.io/multiple-templates-support": "true"}}}
	g.Expect(c.Create(ctx, template)).To(Succeed())
	e := &Emulator{Client: c, Name: "workers", Clock: clocktesting.NewFakeClock(time.Now()),
		Template: TemplateRef{APIVersion: s3gwv1alpha1.GroupVersion.String(), Kind: "S3GWRemediationTemplate",
			Namespace: "default", Name: "multi"}}
	g.Expect(e.CreateNodeHealthCheck(ctx, c)).To(Succeed())
	cp := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cp-1", Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}}}
	cr, err := e.Remediate(ctx, cp)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cr.GetName()).To(HavePrefix("cp-1-"))
	g.Expect(cr.GetLabels()).To(HaveKey(ControlPlaneLabel))

	excluded := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w-2",
		Labels: map[string]string{"remediation.medik8s.io/exclude-from-remediation": "true"}}}
	cr, err = e.Remediate(ctx, excluded)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cr).To(BeNil())
}
