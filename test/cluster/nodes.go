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

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controllerManagedAttachDetach makes the attach-detach controller, not the
// kubelet, attach volumes for pods on the node, as on every modern cluster.
const controllerManagedAttachDetach = "volumes.kubernetes.io/controller-managed-attach-detach"

// nodeWaitTimeout bounds AddNode and RecoverNode; kwok reports a managed
// node Ready within a second or two.
const nodeWaitTimeout = time.Minute

// AddNode registers a simulated node and waits until it is Ready and
// schedulable (kube-controller-manager has removed the not-ready taint that
// admission puts on every new node).
func (c *Cluster) AddNode(ctx context.Context, name string) error {
	return c.AddNodeWithLabels(ctx, name, nil)
}

// AddNodeWithLabels is AddNode with extra labels, set at registration as a
// kubelet's --node-labels are: a topology.kubernetes.io/zone (the
// node-lifecycle controller rate-limits evictions and judges disruption per
// zone), or a pool label that a NodeHealthCheck or a workload selects. The
// node's own labels (hostname, the kubelet-running label) win over extras.
func (c *Cluster) AddNodeWithLabels(ctx context.Context, name string, extra map[string]string) error {
	labels := map[string]string{}
	for k, v := range extra {
		labels[k] = v
	}
	for k, v := range map[string]string{
		ManagedNodeLabel:                 "true",
		corev1.LabelHostname:             name,
		corev1.LabelOSStable:             "linux",
		corev1.LabelArchStable:           "amd64",
		"node-role.kubernetes.io/worker": "",
	} {
		labels[k] = v
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      labels,
		Annotations: map[string]string{controllerManagedAttachDetach: "true"},
	}}
	if err := c.client.Create(ctx, node); err != nil {
		return fmt.Errorf("creating Node %s: %w", name, err)
	}
	return c.WaitForNode(ctx, name, nodeWaitTimeout, func(n *corev1.Node) bool {
		return NodeReady(n) && !hasTaint(n, corev1.TaintNodeNotReady)
	})
}

// FailNode stops the node's simulated kubelet: kwok no longer renews its
// Lease or runs its pods, and longhornsim freezes its volumes. The real
// node-lifecycle controller then marks it Unknown and taints it
// unreachable after NodeMonitorGracePeriod, just as for a crashed machine.
//
// A network partition looks exactly the same from the API server, so tests
// of a partition call FailNode too. What differs is the truth behind it: a
// partitioned node may still be writing, and only fencing evidence (a FAR
// or SNR result, an out-of-service taint) may make a test treat it as safe
// to release. Tests express that difference in the evidence they add, not
// in how the node fails.
func (c *Cluster) FailNode(ctx context.Context, name string) error {
	return c.setManaged(ctx, name, false)
}

// RecoverNode restarts the node's simulated kubelet and waits until the
// node reports Ready again. The node-lifecycle controller removes the
// unreachable taints shortly afterwards, on its own schedule.
func (c *Cluster) RecoverNode(ctx context.Context, name string) error {
	if err := c.setManaged(ctx, name, true); err != nil {
		return err
	}
	return c.WaitForNode(ctx, name, nodeWaitTimeout, NodeReady)
}

func (c *Cluster) setManaged(ctx context.Context, name string, managed bool) error {
	var value any // JSON null removes the label
	if managed {
		value = "true"
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{ManagedNodeLabel: value}}})
	if err != nil {
		return fmt.Errorf("encoding label patch: %w", err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.client.Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting %s=%v on Node %s: %w", ManagedNodeLabel, managed, name, err)
	}
	return nil
}

// WaitForNode polls the node until cond holds or timeout elapses.
func (c *Cluster) WaitForNode(ctx context.Context, name string, timeout time.Duration, cond func(*corev1.Node) bool) error {
	var node corev1.Node
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.client.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(&node), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Node %s (conditions %v, taints %v): %w", name, conditionSummary(&node), node.Spec.Taints, err)
	}
	return nil
}

// NodeReady reports whether the node's Ready condition is True.
func NodeReady(node *corev1.Node) bool {
	return nodeCondition(node, corev1.NodeReady) == corev1.ConditionTrue
}

// NodeUnreachable reports whether the node-lifecycle controller has given
// up on the node: Ready is Unknown and the unreachable NoExecute taint,
// which drives eviction, is set.
func NodeUnreachable(node *corev1.Node) bool {
	return nodeCondition(node, corev1.NodeReady) == corev1.ConditionUnknown &&
		hasTaintEffect(node, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
}

func nodeCondition(node *corev1.Node, t corev1.NodeConditionType) corev1.ConditionStatus {
	for _, cond := range node.Status.Conditions {
		if cond.Type == t {
			return cond.Status
		}
	}
	return ""
}

func hasTaint(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func hasTaintEffect(node *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

func conditionSummary(node *corev1.Node) map[corev1.NodeConditionType]corev1.ConditionStatus {
	summary := map[corev1.NodeConditionType]corev1.ConditionStatus{}
	for _, cond := range node.Status.Conditions {
		summary[cond.Type] = cond.Status
	}
	return summary
}
