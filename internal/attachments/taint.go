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

package attachments

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
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
// that added its out-of-service taint and the timeAdded it stamped on it
// ("<uid>@<RFC 3339 time>"). It is written in the same patch as the taint
// and removed with it, so whose taint it is is never in doubt: not after a
// crash between two writes, not when a fencer adds the same taint in the
// same second. FAR and SNR remove the taint by key and leave the annotation:
// it is then stale (failover.TaintOwnership) and removed by the next step.
const TaintOwnerAnnotation = "s3gw-remediation.medik8s.io/out-of-service-taint-owner"

// ownerRecord formats the owner annotation's value.
func ownerRecord(owner types.UID, timeAdded metav1.Time) string {
	return string(owner) + "@" + timeAdded.UTC().Format(time.RFC3339)
}

// TaintOwnerRecord parses the node's owner annotation; nil when the node has
// none. A value that does not parse names no taint: its owner is empty, so
// it is stale.
func TaintOwnerRecord(node *corev1.Node) *failover.TaintOwnerRecord {
	value, ok := node.Annotations[TaintOwnerAnnotation]
	if !ok {
		return nil
	}
	uid, stamp, found := strings.Cut(value, "@")
	at, err := time.Parse(time.RFC3339, stamp)
	if !found || err != nil {
		return &failover.TaintOwnerRecord{}
	}
	return &failover.TaintOwnerRecord{Owner: types.UID(uid), TimeAdded: at}
}

// TaintOwnership reads the node's taint with the key and effect and its
// owner annotation, and says whose the taint is ("" when it is not an
// S3GWRemediation's, or there is none) and whether the annotation is stale.
func TaintOwnership(node *corev1.Node, taint corev1.Taint) (owner types.UID, stale bool) {
	var seen *failover.Taint
	if t := FindTaint(node, taint); t != nil {
		seen = &failover.Taint{}
		if t.TimeAdded != nil {
			seen.TimeAdded = &t.TimeAdded.Time
		}
	}
	return failover.TaintOwnership(TaintOwnerRecord(node), seen)
}

// TaintOwner returns the UID of the remediation that added the node's taint
// with the key and effect, or "" when the node carries none or someone
// else's.
func TaintOwner(node *corev1.Node, taint corev1.Taint) types.UID {
	owner, _ := TaintOwnership(node, taint)
	return owner
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
	now = now.Rfc3339Copy()
	taint.TimeAdded = &now
	taints := append(slices.Clone(node.Spec.Taints), taint)
	if err := patchTaints(ctx, c, node, taints, ptr.To(ownerRecord(owner, now))); err != nil {
		return false, fmt.Errorf("adding taint %s:%s to node %s: %w", taint.Key, taint.Effect, node.Name, err)
	}
	return true, nil
}

// RemoveOwnedTaint removes the taint and the owner annotation in one patch
// if the taint is owner's (TaintOwner); a taint someone else added stays.
// The patch is optimistic-locked on the node the caller read.
func RemoveOwnedTaint(ctx context.Context, c client.Client, node *corev1.Node, taint corev1.Taint, owner types.UID) error {
	if TaintOwner(node, taint) != owner {
		return nil
	}
	kept := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
	if err := patchTaints(ctx, c, node, kept, nil); err != nil {
		return fmt.Errorf("removing taint %s:%s from node %s: %w", taint.Key, taint.Effect, node.Name, err)
	}
	return nil
}

// DropStaleTaintOwner removes an owner annotation that names no taint on
// the node (TaintOwnership says stale), optimistic-locked on the node the
// caller read: if our taint was added meanwhile, the patch conflicts. The
// taints are written as read.
func DropStaleTaintOwner(ctx context.Context, c client.Client, node *corev1.Node, taint corev1.Taint) error {
	if _, stale := TaintOwnership(node, taint); !stale {
		return nil
	}
	if err := patchTaints(ctx, c, node, slices.Clone(node.Spec.Taints), nil); err != nil {
		return fmt.Errorf("removing the stale taint owner annotation from node %s: %w", node.Name, err)
	}
	return nil
}

// patchTaints sets the node's taints and its owner annotation (nil removes
// it) in one JSON merge patch, optimistic-locked on the node's
// resourceVersion. The patch is written out rather than computed from the
// node: the node is the manager's cache copy, trimmed to the owner
// annotation, and a patch computed from it sets metadata.annotations to
// null — every annotation of the node — once that last one is deleted. On
// success node is the API server's copy.
func patchTaints(ctx context.Context, c client.Client, node *corev1.Node, taints []corev1.Taint, owner *string) error {
	if taints == nil {
		taints = []corev1.Taint{} // null would mean "drop the field": the same, but say it plainly
	}
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"resourceVersion": node.ResourceVersion,
			"annotations":     map[string]*string{TaintOwnerAnnotation: owner},
		},
		"spec": map[string]any{"taints": taints},
	})
	if err != nil {
		return err
	}
	return c.Patch(ctx, node, client.RawPatch(types.MergePatchType, data))
}

// OwnTaint is the out-of-service taint on the node that the node's owner
// annotation says this remediation added, or nil.
func OwnTaint(node *corev1.Node, uid types.UID) *corev1.Taint {
	if node == nil {
		return nil
	}
	taint := FindTaint(node, OutOfServiceTaint())
	if taint == nil || TaintOwner(node, *taint) != uid {
		return nil
	}
	return taint
}

// WithoutTaint drops the taints with the key and effect.
func WithoutTaint(taints []corev1.Taint, taint corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if !t.MatchTaint(&taint) {
			out = append(out, t)
		}
	}
	return out
}
