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
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// What the cache holds per node: the node, its Lease, its Longhorn Node
// and its instance manager, each decoded as the informer decodes it (core
// kinds from protobuf, Longhorn's from JSON) from an object shaped as the
// local cluster and longhorn-manager write them.

// servedNode is node i's four cached kinds as the API serves them.
type servedNode struct{ node, lease, longhornNode, instanceManager []byte }

func serveNode(i int) servedNode {
	name := fmt.Sprintf("node-%04d", i)
	meta := func(namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name, UID: "b0019e8e-6f28-4d51-bf1f-617c8639c3ca",
			ResourceVersion: fmt.Sprint(10000 + i), CreationTimestamp: t0, ManagedFields: managedBy}
	}
	node := &corev1.Node{ObjectMeta: meta(""), Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
		LastHeartbeatTime: t0, LastTransitionTime: t0}}}}
	node.Labels = map[string]string{"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
		"node-role.kubernetes.io/worker": "", "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%10)}
	node.Annotations = map[string]string{"node.alpha.kubernetes.io/ttl": "15", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
	renewed := metav1.NewMicroTime(t0.Time)
	lease := &coordinationv1.Lease{ObjectMeta: meta(corev1.NamespaceNodeLease),
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(40)), RenewTime: &renewed}}
	lhNode := map[string]any{"apiVersion": "longhorn.io/v1beta2", "kind": "Node", "metadata": meta("longhorn-system"),
		"status": map[string]any{"conditions": []map[string]any{
			{"type": "Ready", "status": "True", "reason": "", "message": "", "lastProbeTime": "", "lastTransitionTime": t0},
			{"type": "Schedulable", "status": "True", "reason": "", "message": "", "lastProbeTime": "", "lastTransitionTime": t0},
			{"type": "MountPropagation", "status": "True", "reason": "", "message": "", "lastProbeTime": "", "lastTransitionTime": t0},
		}}}
	imMeta := meta("longhorn-system")
	imMeta.Name = fmt.Sprintf("instance-manager-%032x", i)
	imMeta.Labels = map[string]string{"longhorn.io/component": "instance-manager", "longhorn.io/data-engine": "v1",
		"longhorn.io/instance-manager-type": "aio", "longhorn.io/managed-by": "longhorn-manager", longhorn.InstanceManagerNodeLabel: name}
	im := map[string]any{"apiVersion": "longhorn.io/v1beta2", "kind": "InstanceManager", "metadata": imMeta,
		"spec": map[string]any{"nodeID": name, "dataEngine": "v1", "image": "longhornio/longhorn-instance-manager:v1.9.1"},
		"status": map[string]any{"currentState": "running", "instanceReplicas": map[string]any{
			fmt.Sprintf("pvc-%04d-r-%08x", i, i): map[string]any{"status": map[string]any{"state": "running", "port": 10010}}}}}
	return servedNode{node: mustProto(node), lease: mustProto(lease), longhornNode: mustJSON(lhNode), instanceManager: mustJSON(im)}
}

func mustProto(m interface{ Marshal() ([]byte, error) }) []byte {
	b, err := m.Marshal()
	if err != nil {
		panic(err)
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// decoded holds one node's four kinds as the informer hands them to the
// transform.
func (s servedNode) decoded() (*corev1.Node, *coordinationv1.Lease, *longhorn.Node, *longhorn.InstanceManager) {
	node, lease, lhNode, im := &corev1.Node{}, &coordinationv1.Lease{}, &longhorn.Node{}, &longhorn.InstanceManager{}
	if err := node.Unmarshal(s.node); err != nil {
		panic(err)
	}
	if err := lease.Unmarshal(s.lease); err != nil {
		panic(err)
	}
	if err := json.Unmarshal(s.longhornNode, lhNode); err != nil {
		panic(err)
	}
	if err := json.Unmarshal(s.instanceManager, im); err != nil {
		panic(err)
	}
	return node, lease, lhNode, im
}

// cachedBytesPerNode is the live heap that nodes × the four cached kinds
// take once each went through its transform (strip: managed fields only,
// as a kind without one of its own).
func cachedBytesPerNode(nodes int, trimmed bool) float64 {
	served := make([]servedNode, nodes)
	for i := range served {
		served[i] = serveNode(i)
	}
	strip := cache.TransformStripManagedFields() // CacheOptions' DefaultTransform
	kinds := []toolscache.TransformFunc{strip, strip, strip, strip}
	if trimmed {
		kinds = []toolscache.TransformFunc{trimNode, trimLease, trimLonghornNode, trimInstanceManager}
	}
	before := liveHeap()
	kept := make([]any, 0, 4*nodes)
	for _, s := range served {
		node, lease, lhNode, im := s.decoded()
		for i, o := range []any{node, lease, lhNode, im} {
			out, err := kinds[i](o)
			if err != nil {
				panic(err)
			}
			kept = append(kept, out)
		}
	}
	after := liveHeap()
	runtime.KeepAlive(kept)
	runtime.KeepAlive(served) // else its buffers' release is counted against the cache
	return float64(after-before) / float64(nodes)
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkCachedBytesPerNode reports what one node costs the cache in the
// four kinds it holds per node (docs/benchmark.md): `go test
// ./controllers -run '^$' -bench CachedBytesPerNode`.
func BenchmarkCachedBytesPerNode(b *testing.B) {
	for _, trimmed := range []bool{false, true} {
		b.Run(fmt.Sprintf("trimmed=%v", trimmed), func(b *testing.B) {
			var perNode float64
			for b.Loop() {
				perNode = cachedBytesPerNode(1000, trimmed)
			}
			b.ReportMetric(perNode, "B/node")
		})
	}
}

// The strings that repeat from node to node are kept once: two nodes'
// trimmed copies share their label keys, zone, condition reason and
// namespace, and a node's hostname label shares its name.
func TestTrimmedNodesShareRepeatedStrings(t *testing.T) {
	g := NewWithT(t)
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	a, b := serveNode(1), serveNode(11) // the same zone
	nodeA, leaseA, lhA, imA := a.decoded()
	nodeB, leaseB, lhB, imB := b.decoded()
	for _, trim := range []struct {
		f    toolscache.TransformFunc
		a, b any
	}{{trimNode, nodeA, nodeB}, {trimLease, leaseA, leaseB}, {trimLonghornNode, lhA, lhB}, {trimInstanceManager, imA, imB}} {
		_, errA := trim.f(trim.a)
		_, errB := trim.f(trim.b)
		g.Expect(errA).NotTo(HaveOccurred())
		g.Expect(errB).NotTo(HaveOccurred())
	}
	g.Expect(nodeA.Labels["topology.kubernetes.io/zone"]).To(Equal("zone-1"))
	g.Expect(same(nodeA.Labels["topology.kubernetes.io/zone"], nodeB.Labels["topology.kubernetes.io/zone"])).To(BeTrue(), "the zone")
	for k := range nodeA.Labels {
		for l := range nodeB.Labels {
			if k == l {
				g.Expect(same(k, l)).To(BeTrue(), "label key %s", k)
			}
		}
	}
	g.Expect(same(nodeA.Labels["kubernetes.io/hostname"], nodeA.Name)).To(BeTrue(), "the hostname label is the node's name")
	ready := func(n *corev1.Node) corev1.NodeCondition { return n.Status.Conditions[0] }
	g.Expect(same(ready(nodeA).Message, ready(nodeB).Message) && same(ready(nodeA).Reason, ready(nodeB).Reason)).To(BeTrue())
	g.Expect(same(leaseA.Namespace, leaseB.Namespace)).To(BeTrue(), "the Lease namespace")
	g.Expect(same(lhA.Status.Conditions[0].Status, lhB.Status.Conditions[0].Status)).To(BeTrue(), "a Longhorn condition status")
	g.Expect(imA.Labels).To(BeNil(), "instanceManagersOn reads spec.nodeID")
	g.Expect(same(imA.Status.CurrentState, imB.Status.CurrentState)).To(BeTrue(), "the instance manager's state")
}
