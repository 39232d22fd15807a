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
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// servedInput is input of a gateway pod as read from the API: with a UID
// and a resourceVersion.
func servedInput() Input {
	pod := gatewayPod("gw", "node-a", 0)
	pod.UID, pod.ResourceVersion = "pod-uid", "41"
	return input(pod, s3gwv1alpha1.PrePullSpec{Enabled: true})
}

func TestSpecHashesBuildOnlyWhatChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Input)
		// rebuilt is whether the pass after the change builds the DaemonSet.
		rebuilt bool
	}{
		{name: "nothing changed", change: func(*Input) {}},
		{name: "the pod changed (its image)", rebuilt: true, change: func(in *Input) {
			in.Pod = in.Pod.DeepCopy()
			in.Pod.Spec.Containers[0].Image, in.Pod.ResourceVersion = "quay.io/s3gw/s3gw:v1.0", "42"
		}},
		{name: "the pod was written, to the same content", rebuilt: true, change: func(in *Input) {
			in.Pod = in.Pod.DeepCopy()
			in.Pod.ResourceVersion = "42"
		}},
		{name: "another pod, the same resourceVersion", rebuilt: true, change: func(in *Input) {
			in.Pod = in.Pod.DeepCopy()
			in.Pod.UID, in.Pod.Spec.NodeName = "replacement-uid", "node-b"
		}},
		{name: "the template's spec.prePull", rebuilt: true, change: func(in *Input) { in.Spec.Mechanism = s3gwv1alpha1.PrePullImageVolume }},
		{name: "the program image", rebuilt: true, change: func(in *Input) { in.ProgramImage = "quay.io/s3gw/s3gw-remediation:v0.2.0" }},
		{name: "the templates", rebuilt: true, change: func(in *Input) {
			in.Templates = append([]string{"s3gw-remediation-system/a"}, in.Templates...)
		}},
		{name: "the gateway's owner", rebuilt: true, change: func(in *Input) { in.Gateway.Owner.UID = "new-rs" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var hashes SpecHashes
			in := servedInput()
			first := hashes.Desired(in)
			g.Expect(first.built).NotTo(BeNil(), "nothing remembered yet")
			g.Expect(first.Hash).To(Equal(DaemonSet(in).Annotations[SpecHashAnnotation]))
			g.Expect(first.NamespacedName).To(Equal(types.NamespacedName{Namespace: "s3gw", Name: "demo-s3gw-prepull"}))

			tt.change(&in)
			next := hashes.Desired(in)
			g.Expect(next.built != nil).To(Equal(tt.rebuilt))
			g.Expect(next.Hash).To(Equal(DaemonSet(in).Annotations[SpecHashAnnotation]), "the hash of what the input builds")
			g.Expect(next.Build()).To(Equal(DaemonSet(in)))
			g.Expect(hashes.byKey).To(HaveLen(1), "one hash per gateway")
		})
	}
}

func TestSpecHashesRememberOnlyServedPodsAndRetainedGateways(t *testing.T) {
	g := NewWithT(t)
	var hashes SpecHashes
	in := servedInput()
	hashes.Desired(in)
	g.Expect(hashes.Desired(in).built).To(BeNil())

	hashes.Retain(func(key types.NamespacedName) bool { return key.Name == "demo-s3gw-prepull" })
	g.Expect(hashes.Desired(in).built).To(BeNil(), "retained")
	hashes.Retain(func(types.NamespacedName) bool { return false })
	g.Expect(hashes.byKey).To(BeEmpty(), "the gateway gone")
	g.Expect(hashes.Desired(in).built).NotTo(BeNil())

	unserved := input(gatewayPod("gw", "node-a", 0), s3gwv1alpha1.PrePullSpec{Enabled: true})
	hashes.Retain(func(types.NamespacedName) bool { return false })
	hashes.Desired(unserved)
	g.Expect(hashes.Desired(unserved).built).NotTo(BeNil(), "a pod without a resourceVersion is not told apart from its next version")
	g.Expect(hashes.byKey).To(BeEmpty())

	var none *SpecHashes
	g.Expect(none.Desired(in).Hash).To(Equal(DaemonSet(in).Annotations[SpecHashAnnotation]))
	none.Retain(func(types.NamespacedName) bool { return false })
}
