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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

func TestGatewayOf(t *testing.T) {
	controlledBy := func(kind, name string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: "uid", Controller: ptr.To(true)}}
		}
	}
	tests := []struct {
		name     string
		change   func(*corev1.Pod)
		ok       bool
		kind     string
		gateway  string
		owner    string
		dsName   string
		ownerUID string
	}{
		{name: "a Deployment's pod: named from its ReplicaSet and pod-template-hash", change: func(*corev1.Pod) {},
			ok: true, kind: "Deployment", gateway: "demo-s3gw", owner: "demo-s3gw-5d8f7c", dsName: "demo-s3gw-prepull", ownerUID: "rs-uid"},
		{name: "a bare ReplicaSet's pod", change: func(p *corev1.Pod) { delete(p.Labels, "pod-template-hash") },
			ok: true, kind: "ReplicaSet", gateway: "demo-s3gw-5d8f7c", owner: "demo-s3gw-5d8f7c", dsName: "demo-s3gw-5d8f7c-replicaset-prepull", ownerUID: "rs-uid"},
		{name: "a StatefulSet's pod", change: controlledBy("StatefulSet", "s3gw"),
			ok: true, kind: "StatefulSet", gateway: "s3gw", owner: "s3gw", dsName: "s3gw-statefulset-prepull", ownerUID: "uid"},
		{name: "an unowned pod: nothing would replace it", change: func(p *corev1.Pod) { p.OwnerReferences = nil }},
		{name: "a DaemonSet's pod", change: controlledBy("DaemonSet", "demo-s3gw-prepull")},
		{name: "a static pod's mirror", change: controlledBy("Node", "node-a")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			pod := gatewayPod("gw", "node-a", 0)
			tt.change(pod)
			gw, ok := GatewayOf(pod)
			g.Expect(ok).To(Equal(tt.ok))
			if !ok {
				return
			}
			g.Expect(gw.Namespace).To(Equal("s3gw"))
			g.Expect(gw.Kind).To(Equal(tt.kind))
			g.Expect(gw.Name).To(Equal(tt.gateway))
			g.Expect(gw.Owner.Name).To(Equal(tt.owner))
			g.Expect(string(gw.Owner.UID)).To(Equal(tt.ownerUID))
			g.Expect(gw.DaemonSetName()).To(Equal(tt.dsName))
		})
	}
}

func TestDaemonSetNameFitsALabelValueAndAName(t *testing.T) {
	g := NewWithT(t)
	long := strings.Repeat("very-long-gateway.name-", 10) + "s3gw"
	a := Gateway{Kind: "Deployment", Name: long}.DaemonSetName()
	b := Gateway{Kind: "StatefulSet", Name: long}.DaemonSetName()
	c := Gateway{Kind: "Deployment", Name: long + "x"}.DaemonSetName()
	for _, name := range []string{a, b, c} {
		g.Expect(validation.IsValidLabelValue(name)).To(BeEmpty(), name)
		g.Expect(validation.IsDNS1123Subdomain(name)).To(BeEmpty(), name)
		g.Expect(len(name)).To(BeNumerically("<=", 63))
	}
	g.Expect(a).NotTo(Equal(b), "kinds differ")
	g.Expect(a).NotTo(Equal(c), "names differ")
	g.Expect(a).To(HaveSuffix("-prepull"))
}

func TestHome(t *testing.T) {
	g := NewWithT(t)
	old := gatewayPod("old", "node-a", 0)
	replacement := gatewayPod("new", "node-b", 5)
	pending := gatewayPod("pending", "", 9)
	g.Expect(Home([]*corev1.Pod{old, replacement, pending})).To(Equal(replacement), "the newest pod on a node")

	now := metav1.Now()
	replacement.DeletionTimestamp = &now
	g.Expect(Home([]*corev1.Pod{old, replacement, pending})).To(Equal(old), "a pod being deleted is not home")

	old.Status.Phase = corev1.PodFailed
	g.Expect(Home([]*corev1.Pod{old, replacement, pending})).To(BeNil(), "between pods: no home")
}

func TestImages(t *testing.T) {
	NewWithT(t).Expect(Images(gatewayPod("gw", "node-a", 0))).To(Equal([]string{"quay.io/s3gw/s3gw:v0.99", "quay.io/s3gw/ui:v0.99"}))
}
