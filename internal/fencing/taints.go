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

// Owns reports whether the node carries the taint a remediation recorded:
// same key and effect, and the timeAdded it stamped (to the second, as the
// API stores it). A taint someone else added, even with the same key and
// value, is not ours.
func Owns(node *corev1.Node, recorded corev1.Taint) bool {
	for i := range node.Spec.Taints {
		if sameTaint(&node.Spec.Taints[i], &recorded) {
			return true
		}
	}
	return false
}

// Find returns the node's taint with the key and effect, or nil.
func Find(node *corev1.Node, taint corev1.Taint) *corev1.Taint {
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].MatchTaint(&taint) {
			return &node.Spec.Taints[i]
		}
	}
	return nil
}

func sameTaint(t, recorded *corev1.Taint) bool {
	return t.MatchTaint(recorded) && t.TimeAdded != nil && recorded.TimeAdded != nil &&
		t.TimeAdded.Unix() == recorded.TimeAdded.Unix()
}

// AddTaint adds the taint, with its own timeAdded, unless one with its key
// and effect is there. The patch is optimistic-locked so it never drops a
// taint another controller (e.g. the node-lifecycle controller) added
// meanwhile, and so that a taint it adds is certainly the one recorded.
func AddTaint(ctx context.Context, c client.Client, node *corev1.Node, taint corev1.Taint) error {
	if HasTaint(node, taint) {
		return nil
	}
	patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
	node.Spec.Taints = append(node.Spec.Taints, taint)
	if err := c.Patch(ctx, node, patch); err != nil {
		return fmt.Errorf("adding taint %s:%s to node %s: %w", taint.Key, taint.Effect, node.Name, err)
	}
	return nil
}

// RemoveOwnTaint removes the recorded taint if the node still carries it
// (Owns); a taint with the same key and effect that someone else added
// stays.
func RemoveOwnTaint(ctx context.Context, c client.Client, node *corev1.Node, recorded corev1.Taint) error {
	if !Owns(node, recorded) {
		return nil
	}
	patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
	kept := node.Spec.Taints[:0:0]
	for _, t := range node.Spec.Taints {
		if !sameTaint(&t, &recorded) {
			kept = append(kept, t)
		}
	}
	node.Spec.Taints = kept
	if err := c.Patch(ctx, node, patch); err != nil {
		return fmt.Errorf("removing taint %s:%s from node %s: %w", recorded.Key, recorded.Effect, node.Name, err)
	}
	return nil
}
