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

package release

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// FindTaint returns the node's taint with the key and effect, or nil.
func FindTaint(node *corev1.Node, taint corev1.Taint) *corev1.Taint {
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].MatchTaint(&taint) {
			return &node.Spec.Taints[i]
		}
	}
	return nil
}

// TaintOwnerAnnotation names, on the node, the S3GWRemediation (by UID)
// that added its out-of-service taint. It is written in the same patch as
// the taint and removed with it, so whose taint it is is never in doubt:
// not after a crash between two writes, not when a fencer adds the same
// taint in the same second.
const TaintOwnerAnnotation = "s3gw-remediation.medik8s.io/out-of-service-taint-owner"

// TaintOwner returns the UID of the remediation that added the node's taint
// with the key and effect, or "" when the node carries none or someone
// else's (no owner annotation).
func TaintOwner(node *corev1.Node, taint corev1.Taint) types.UID {
	if !HasTaint(node, taint) {
		return ""
	}
	return types.UID(node.Annotations[TaintOwnerAnnotation])
}

// AddOwnedTaint adds the taint, stamped now, and the owner annotation in one
// patch, unless a taint with its key and effect is there already: that one
// is someone else's, and nothing is written. The patch is optimistic-locked
// on the node the caller read, so it never drops a taint another controller
// added meanwhile. It reports whether it added the taint.
func AddOwnedTaint(ctx context.Context, c client.Client, node *corev1.Node, taint corev1.Taint, owner types.UID, now metav1.Time) (bool, error) {
	if HasTaint(node, taint) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
	taint.TimeAdded = &now
	node.Spec.Taints = append(node.Spec.Taints, taint)
	metav1.SetMetaDataAnnotation(&node.ObjectMeta, TaintOwnerAnnotation, string(owner))
	if err := c.Patch(ctx, node, patch); err != nil {
		return false, fmt.Errorf("adding taint %s:%s to node %s: %w", taint.Key, taint.Effect, node.Name, err)
	}
	return true, nil
}

// RemoveOwnedTaint removes the taint and the owner annotation in one patch
// if the annotation names owner; a taint someone else added stays.
func RemoveOwnedTaint(ctx context.Context, c client.Client, node *corev1.Node, taint corev1.Taint, owner types.UID) error {
	if types.UID(node.Annotations[TaintOwnerAnnotation]) != owner {
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
	delete(node.Annotations, TaintOwnerAnnotation)
	if err := c.Patch(ctx, node, patch); err != nil {
		return fmt.Errorf("removing taint %s:%s from node %s: %w", taint.Key, taint.Effect, node.Name, err)
	}
	return nil
}
