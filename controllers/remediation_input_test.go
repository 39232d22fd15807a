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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
)

// broadSelector matches every s3gw pod, gateway or not: wide enough to catch
// pods the controller must never touch.
var broadSelector = &s3gwv1alpha1.LabelSelector{MatchLabels: map[string]s3gwv1alpha1.LabelValue{"app.kubernetes.io/name": "s3gw"}}

// addBystander creates a pod on the node matching broadSelector, shaped by
// mutate (a DaemonSet's pod, a mirror pod, a pod in Longhorn's namespace).
func (w *world) addBystander(node, namespace, name string, mutate func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "s3gw"}},
		Spec: corev1.PodSpec{NodeName: w.nodeName(node), Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	mutate(pod)
	Expect(w.c.Create(w.ctx, pod)).To(Succeed())
	return pod
}

// A selector or a remediator apiVersion that does not parse never gets this
// far: the API server refuses it (api/v1alpha1/crd_rules_test.go). One
// stored before those rules existed is still handled: internal/failover
// table-tests the decision, internal/workloads and internal/fencing the
// reads.
var _ = Describe("Bad input", func() {
	DescribeTable("never touches a pod it must not, whatever the selector, and says so",
		func(namespace func(w *world) string, mutate func(*corev1.Pod), why string) {
			s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{WorkloadSelector: broadSelector})
			bystander := s.w.addBystander("failed", namespace(s.w), "bystander", mutate)
			st := s.w.stepper(managerClient)
			st.until(s.key, 20, succeeded)

			s.expectMoved()
			Expect(s.w.podExists(bystander)).To(BeTrue(), "the protected pod is left alone")
			rem := s.w.remediation(s.key)
			c := conditionOf(rem, s3gwv1alpha1.ConditionWorkloadSelectorValid)
			Expect(c.Status).To(Equal(metav1.ConditionFalse))
			Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonSelectsProtectedPods))
			Expect(c.Message).To(ContainSubstring(bystander.Namespace + "/bystander (" + why))
			Expect(rem.Status.Targets).To(HaveLen(1))
			Expect(st.eventsWithReason(remediation.EventProtectedPodsRefused)).To(ConsistOf(And(
				ContainSubstring("Warning"), ContainSubstring(bystander.Namespace+"/bystander"))), "warned once")
		},
		Entry("a DaemonSet's pod", func(w *world) string { return w.ns }, func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent",
				UID: "ds-uid", Controller: ptr.To(true)}}
		}, "owned by DaemonSet agent"),
		Entry("a static pod's mirror", func(w *world) string { return w.ns }, func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
		}, "a static pod's mirror"),
		Entry("a pod in Longhorn's namespace", func(*world) string { return longhornNS }, func(*corev1.Pod) {},
			"in the Longhorn namespace"),
	)
})
