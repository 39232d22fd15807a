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

package fencing

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OutOfServiceTaint is the non-graceful node shutdown taint (KEP-2268).
func OutOfServiceTaint() corev1.Taint {
	return corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
}

// HasTaint reports whether the node carries a taint with the key and effect.
func HasTaint(node *corev1.Node, taint corev1.Taint) bool {
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].MatchTaint(&taint) {
			return true
		}
	}
	return false
}

// AddTaint adds the taint unless one with its key and effect is there. The
// patch is optimistic-locked so it never drops a taint another controller
// (e.g. the node-lifecycle controller) added meanwhile.
func AddTaint(ctx context.Context, c client.Client, node *corev1.Node, taint corev1.Taint, now metav1.Time) error {
	if HasTaint(node, taint) {
		return nil
	}
	patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
	taint.TimeAdded = &now
	node.Spec.Taints = append(node.Spec.Taints, taint)
	if err := c.Patch(ctx, node, patch); err != nil {
		return fmt.Errorf("adding taint %s:%s to node %s: %w", taint.Key, taint.Effect, node.Name, err)
	}
	return nil
}

// RemoveTaint removes every taint with the key and effect; a no-op if none.
func RemoveTaint(ctx context.Context, c client.Client, node *corev1.Node, taint corev1.Taint) error {
	if !HasTaint(node, taint) {
		return nil
	}
	patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
	kept := node.Spec.Taints[:0:0]
	for _, t := range node.Spec.Taints {
		if !t.MatchTaint(&taint) {
			kept = append(kept, t)
		}
	}
	node.Spec.Taints = kept
	if err := c.Patch(ctx, node, patch); err != nil {
		return fmt.Errorf("removing taint %s:%s from node %s: %w", taint.Key, taint.Effect, node.Name, err)
	}
	return nil
}
