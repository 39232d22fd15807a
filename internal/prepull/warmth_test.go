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

package prepull

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

const currentImages = "quay.io/s3gw/s3gw:v0.99,quay.io/s3gw/ui:v0.99"

// prepullPod is the gateway's pre-pull pod on node, for images, in state.
func prepullPod(node, images string, state func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw", Name: "demo-s3gw-prepull-" + node,
		Labels: map[string]string{Label: "demo-s3gw-prepull"}, Annotations: map[string]string{ImagesAnnotation: images}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	state(&p)
	return p
}

func running(p *corev1.Pod) {
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
}

func pulling(p *corev1.Pod) {
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "install", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
		{Name: "pull-0", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
}

func backingOff(p *corev1.Pod) {
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "pull-0", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: `Back-off pulling image "quay.io/s3gw/s3gw:v0.99": unauthorized`}}}}
}

// idleFailing: the pulls are done, the idle container crash-loops.
func idleFailing(p *corev1.Pod) {
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "pull-0", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
		{Name: "pull-1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "idle", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
}

func TestAssess(t *testing.T) {
	pod := gatewayPod("gw", "node-a", 0)
	tests := []struct {
		name       string
		candidates []string
		pods       []corev1.Pod
		reason     string
		warm       int32
		cold       []string
		message    []string
	}{
		{name: "warm everywhere", candidates: []string{"node-b", "node-c"},
			pods:   []corev1.Pod{prepullPod("node-b", currentImages, running), prepullPod("node-c", currentImages, running), prepullPod("node-x", currentImages, running)},
			reason: s3gwv1alpha1.ReasonAllCandidatesWarm, warm: 2, message: []string{"2 of 2 candidate nodes hold the images (" + currentImages + ")"}},
		{name: "one still pulling, one without a pod", candidates: []string{"node-b", "node-c", "node-d"},
			pods:   []corev1.Pod{prepullPod("node-b", currentImages, running), prepullPod("node-c", currentImages, pulling)},
			reason: s3gwv1alpha1.ReasonSomeCandidatesCold, warm: 1, cold: []string{"node-c", "node-d"},
			message: []string{"1 of 3", "node-c: pulling", "node-d: no pre-pull pod", "a replacement there pulls them first"}},
		{name: "an upgrade: the pods hold the old images", candidates: []string{"node-b"},
			pods:   []corev1.Pod{prepullPod("node-b", "quay.io/s3gw/s3gw:v0.98,quay.io/s3gw/ui:v0.98", running)},
			reason: s3gwv1alpha1.ReasonAllCandidatesCold, cold: []string{"node-b"}, message: []string{"node-b: its pre-pull pod is for other images"}},
		{name: "the kubelet cannot pull", candidates: []string{"node-b", "node-c"},
			pods:   []corev1.Pod{prepullPod("node-b", currentImages, running), prepullPod("node-c", currentImages, backingOff)},
			reason: s3gwv1alpha1.ReasonImagePullFailing, warm: 1, cold: []string{"node-c"},
			message: []string{"node-c cannot pull: ImagePullBackOff (Back-off pulling image", "unauthorized", "imagePullSecrets"}},
		{name: "the pulls are done, the idle container fails: still warm", candidates: []string{"node-b"},
			pods:   []corev1.Pod{prepullPod("node-b", currentImages, idleFailing)},
			reason: s3gwv1alpha1.ReasonAllCandidatesWarm, warm: 1},
		{name: "a pod being replaced beside its successor", candidates: []string{"node-b"},
			pods: []corev1.Pod{prepullPod("node-b", currentImages, running), prepullPod("node-b", "old", func(p *corev1.Pod) {
				now := metav1.Now()
				p.DeletionTimestamp = &now
			})},
			reason: s3gwv1alpha1.ReasonAllCandidatesWarm, warm: 1},
		{name: "no candidate node", reason: s3gwv1alpha1.ReasonNoCandidateNode,
			message: []string{"No node other than node-a", "a replacement would find no node"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			w := Assess(pod, tt.candidates, tt.pods)
			g.Expect(w.Reason).To(Equal(tt.reason), w.Message)
			g.Expect(w.CandidateNodes).To(BeEquivalentTo(len(tt.candidates)))
			g.Expect(w.WarmNodes).To(Equal(tt.warm))
			g.Expect(w.ColdNodes).To(Equal(tt.cold))
			for _, m := range tt.message {
				g.Expect(w.Message).To(ContainSubstring(m))
			}
		})
	}
}

func TestAssessBoundsWhatItNames(t *testing.T) {
	g := NewWithT(t)
	candidates := make([]string, 0, 25)
	for i := range 25 {
		candidates = append(candidates, fmt.Sprintf("node-%02d", i))
	}
	w := Assess(gatewayPod("gw", "node-a", 0), candidates, nil)
	g.Expect(w.Reason).To(Equal(s3gwv1alpha1.ReasonAllCandidatesCold))
	g.Expect(w.ColdNodes).To(HaveLen(10))
	g.Expect(w.ColdNodes[0]).To(Equal("node-00"))
	g.Expect(w.Message).To(ContainSubstring("and 22 more"))
}
