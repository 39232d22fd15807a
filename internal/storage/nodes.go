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

package storage

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// reasonNeverUpdated is the Ready reason kube-controller-manager sets on a
// node whose kubelet never posted status.
const reasonNeverUpdated = "NodeStatusNeverUpdated"

// NodeLease reads the node's kubelet Lease; nil when there is none.
func NodeLease(ctx context.Context, reader client.Reader, node string) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: node}, lease)
	switch {
	case err == nil:
		return lease, nil
	case apierrors.IsNotFound(err):
		return nil, nil
	default:
		return nil, fmt.Errorf("getting the Lease of node %s: %w", node, err)
	}
}

// Heartbeat reduces the node's Ready condition and its Lease (either may be
// nil) to the facts the gate reads.
func Heartbeat(node *corev1.Node, lease *coordinationv1.Lease) failover.Heartbeat {
	var hb failover.Heartbeat
	if node != nil {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				hb.Ready = string(c.Status)
				hb.ReadySince = c.LastTransitionTime.Time
				// A kubelet that never posted status has none: the
				// node-lifecycle controller wrote the node's creation time
				// as its heartbeat (node_lifecycle_controller.go,
				// tryUpdateNodeHealth, reason NodeStatusNeverUpdated).
				if c.Reason != reasonNeverUpdated {
					hb.KubeletPosted = c.LastHeartbeatTime.Time
				}
			}
		}
	}
	if lease != nil && lease.Spec.RenewTime != nil {
		hb.LeaseRenewed = lease.Spec.RenewTime.Time
		hb.LeaseWritten = LastWrite(lease.ManagedFields)
		if lease.Spec.LeaseDurationSeconds != nil {
			hb.LeaseDuration = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
		}
	}
	return hb
}

// LastWrite is when kube-apiserver last stored a change to an object, on
// its own clock: the latest time among its managedFields entries, which it
// stamps on every write that changes a field (k8s.io/apimachinery,
// pkg/util/managedfields/internal, managedFieldsUpdater.Update). Whoever
// wrote it: a later write only shortens the silence the gate reads. Zero
// when the object carries no entry with a time.
func LastWrite(managed []metav1.ManagedFieldsEntry) time.Time {
	var last time.Time
	for _, m := range managed {
		if m.Time != nil && m.Time.After(last) {
			last = m.Time.Time
		}
	}
	return last
}
