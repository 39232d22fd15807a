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

package worldmodel

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// leaseDurationSeconds is the kubelet's nodeLeaseDurationSeconds, the
// default.
const leaseDurationSeconds = 40

// garbageCollector is kube-controller-manager's garbage collector for the
// one dependent the model has: a node Lease, owned by its Node (k8s.io/
// kubernetes v1.37.2, pkg/controller/garbagecollector/garbagecollector.go,
// attemptToDeleteItem, isDangling). An owner reference is dangling when no
// object of that name has its UID, so a Node re-created under the same
// name does not save the old Node's Lease. It reacts to the Node's deletion
// event, within a step.
func (w *World) garbageCollector() {
	for _, n := range w.nodes {
		lease := w.api.lease(n.Name)
		if lease == nil || len(lease.OwnerReferences) == 0 {
			continue
		}
		if node := w.api.node(n.Name); node == nil || node.UID != lease.OwnerReferences[0].UID {
			w.api.markDeleted(lease)
			w.tracef("kcm", "garbage collector deleted the Lease of %s: its owner is gone", n.Name)
		}
	}
}

// nodeOwner is the owner reference the kubelet puts on its Lease
// (pkg/kubelet/util/nodelease.go, SetNodeOwnerFunc): the Node's UID.
func nodeOwner(node *corev1.Node) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
}

// newNodeLease is the Lease the kubelet creates (component-helpers
// apimachinery/lease/controller.go, newLease) once its Node exists.
func newNodeLease(node *corev1.Node, renew metav1.MicroTime) *coordinationv1.Lease {
	holder, seconds := node.Name, int32(leaseDurationSeconds)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: leaseNamespace, Name: node.Name, OwnerReferences: nodeOwner(node)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &renew},
	}
}
