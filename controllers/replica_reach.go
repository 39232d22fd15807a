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
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// replicaNode is whether longhorn-manager can stop a replica process on a
// node, and what the API shows of that node.
type replicaNode struct {
	reachable bool
	state     string
}

// reachReplicaNode reads whether longhorn-manager reaches the node: its
// Longhorn Node is Ready=True and its kubelet renewed its Lease within half
// the Lease's duration (two renewals; a node that stopped renewing is
// suspect long before the node-lifecycle controller marks it NotReady, and
// Longhorn after that). Only then will Longhorn stop a replica there on
// detach. The remediation and the protection report read it the same way.
func reachReplicaNode(ctx context.Context, reader client.Reader, lh longhorn.State, node string, now time.Time) (replicaNode, error) {
	readiness, err := lh.NodeReadiness(ctx, node)
	if err != nil {
		return replicaNode{}, err
	}
	lease, err := getNodeLease(ctx, reader, node)
	if err != nil {
		return replicaNode{}, err
	}
	reach := replicaNode{state: readiness.String()}
	switch hb := heartbeat(nil, lease); {
	case !readiness.Ready():
	case hb.LeaseRenewed.IsZero():
		reach.state = "no kubelet Lease"
	case hb.Lagging(now):
		reach.state = "kubelet Lease not renewed since " + hb.LeaseRenewed.UTC().Format(time.RFC3339) +
			" (a live kubelet renews every " + (hb.LeaseDuration / 4).String() + ")"
	default:
		reach.reachable = true
	}
	return reach, nil
}

// getNodeLease reads the node's kubelet Lease; nil when there is none.
func getNodeLease(ctx context.Context, reader client.Reader, node string) (*coordinationv1.Lease, error) {
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
