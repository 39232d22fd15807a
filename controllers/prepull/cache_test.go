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
	"runtime"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
)

var (
	t0 = metav1.NewTime(time.Date(2026, time.March, 4, 12, 0, 0, 0, time.UTC))
	// gatewayPod is the s3gw chart's gateway pod on node-0000.
	gatewayPod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw", Name: "s3gw-s3gw-7d9c5bd6f4-x2x9p",
		Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "7d9c5bd6f4"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "s3gw-s3gw-7d9c5bd6f4",
			UID: "5b0c6a70-3e51-4c6c-9e58-8a1f4e2b7d10", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "node-0000", Containers: []corev1.Container{{Name: "s3gw", Image: "quay.io/s3gw/s3gw:v0.99.0"}}}}
)

// servedPrePullPod is the gateway's pre-pull pod on node i as the API
// serves it: the DaemonSet's template, scheduled and running, in the state
// the kubelet reports, with managed fields (protobuf).
func servedPrePullPod(i int, state func(*corev1.Pod)) []byte {
	gw, _ := prepull.GatewayOf(gatewayPod)
	ds := prepull.DaemonSet(prepull.Input{Gateway: gw, Pod: gatewayPod, Spec: s3gwv1alpha1.PrePullSpec{Enabled: true},
		ProgramImage: "quay.io/s3gw/s3gw-remediation:v0.1.0", Templates: []string{"s3gw-remediation-system/s3gw-remediation-default-template"}})
	node := fmt.Sprintf("node-%04d", i)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: fmt.Sprintf("%s-%05x", ds.Name, i),
		UID: "0b41c3d2-9a7e-4f5b-8c6d-2e1f0a9b8c7d", ResourceVersion: fmt.Sprint(20000 + i), CreationTimestamp: t0,
		Labels:      map[string]string{prepull.Label: ds.Name, "controller-revision-hash": "6d5c8b7f9", "pod-template-generation": "1"},
		Annotations: ds.Spec.Template.Annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: "d5",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", Time: &t0, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(strings.Repeat("x", 2400))},
			{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t0, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(strings.Repeat("x", 1800)), Subresource: "status"}}},
		Spec: ds.Spec.Template.Spec}
	pod.Spec.NodeName = node
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "10.42.0.1", StartTime: &t0, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{{Type: "PodReadyToStartContainers", Status: "True", LastTransitionTime: t0},
			{Type: corev1.PodInitialized, Status: "True", LastTransitionTime: t0}, {Type: corev1.PodReady, Status: "True", LastTransitionTime: t0},
			{Type: corev1.ContainersReady, Status: "True", LastTransitionTime: t0}, {Type: corev1.PodScheduled, Status: "True", LastTransitionTime: t0}}}
	for _, c := range pod.Spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: c.Image + "@sha256:9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0", Ready: true,
			ContainerID: "containerd://4c3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: t0, FinishedAt: t0,
				ContainerID: "containerd://4c3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d"}}})
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: prepull.IdleContainer, Image: "quay.io/s3gw/s3gw-remediation:v0.1.0",
		ImageID: "quay.io/s3gw/s3gw-remediation@sha256:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809", Ready: true, Started: ptr.To(true),
		ContainerID: "containerd://8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b",
		State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t0}}}}
	if state != nil {
		state(pod)
	}
	data, err := pod.Marshal()
	if err != nil {
		panic(err)
	}
	return data
}

func decodePod(data []byte) *corev1.Pod {
	pod := &corev1.Pod{}
	if err := pod.Unmarshal(data); err != nil {
		panic(err)
	}
	return pod
}

// The trimmed pods give the protection report the same warmth as whole ones.
func TestTrimmedPrePullPodsGiveTheSameWarmth(t *testing.T) {
	g := NewWithT(t)
	backingOff := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: "False"}}
		p.Status.InitContainerStatuses[1].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: `Back-off pulling image "quay.io/s3gw/s3gw:v0.99.0"`}}
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
	}
	idleCrashing := func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: "False"}}
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	}
	whole, trimmed := make([]corev1.Pod, 0, 3), make([]corev1.Pod, 0, 3)
	candidates := []string{"node-0001", "node-0002", "node-0003", "node-0004"}
	for i, state := range []func(*corev1.Pod){nil, backingOff, idleCrashing} {
		served := servedPrePullPod(i+1, state)
		whole = append(whole, *decodePod(served))
		out, err := trimPod(decodePod(served))
		g.Expect(err).NotTo(HaveOccurred())
		trimmed = append(trimmed, *out.(*corev1.Pod))
	}
	want := prepull.Assess(gatewayPod, candidates, whole)
	g.Expect(want.Reason).To(Equal(s3gwv1alpha1.ReasonImagePullFailing))
	g.Expect(want.WarmNodes).To(BeEquivalentTo(2))
	g.Expect(prepull.Assess(gatewayPod, candidates, trimmed)).To(Equal(want))
}

// cachedBytesPerPrePullPod is the live heap n pre-pull pods take once
// through the transform: the pre-pull cache's trim, or controller-runtime's
// strip of managed fields alone.
func cachedBytesPerPrePullPod(n int, trimmed bool) float64 {
	served := make([][]byte, n)
	for i := range served {
		served[i] = servedPrePullPod(i, nil)
	}
	transform := cache.TransformStripManagedFields()
	if trimmed {
		transform = trimPod
	}
	before := liveHeap()
	kept := make([]any, 0, n)
	for _, s := range served {
		out, err := transform(decodePod(s))
		if err != nil {
			panic(err)
		}
		kept = append(kept, out)
	}
	after := liveHeap()
	runtime.KeepAlive(kept)
	runtime.KeepAlive(served)
	return float64(after-before) / float64(n)
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkCachedBytesPerPrePullPod reports what one pre-pull pod, one per
// gateway and candidate node, costs the manager's memory
// (docs/warm-replacement.md, "Cost"): `go test ./controllers/prepull -run
// '^$' -bench CachedBytesPerPrePullPod`.
func BenchmarkCachedBytesPerPrePullPod(b *testing.B) {
	for _, trimmed := range []bool{false, true} {
		b.Run(fmt.Sprintf("trimmed=%v", trimmed), func(b *testing.B) {
			var perPod float64
			for b.Loop() {
				perPod = cachedBytesPerPrePullPod(1000, trimmed)
			}
			b.ReportMetric(perPod, "B/pod")
		})
	}
}
