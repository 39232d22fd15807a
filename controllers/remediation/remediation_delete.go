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

package remediation

import (
	"context"
	"fmt"

	"github.com/medik8s/common/pkg/events"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/release"
)

// reconcileDelete runs when NHC deletes the CR (node healthy again, or
// gone), whether the remediation finished, failed or was timed out: it
// removes the out-of-service taint this remediation added (the node's owner
// annotation names it), deletes the delegate fencing
// CR it created, then drops the finalizer. It never deletes the CR itself.
func (r *Reconciler) reconcileDelete(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node *corev1.Node) error {
	if !controllerutil.ContainsFinalizer(rem, Finalizer) {
		return nil
	}
	log := logf.FromContext(ctx)
	if node != nil {
		if _, stale := release.TaintOwnership(node, release.OutOfServiceTaint()); stale {
			// It names no taint on the node: a fencer removed ours by key.
			if err := release.DropStaleTaintOwner(ctx, r.Client, node, release.OutOfServiceTaint()); err != nil {
				return err
			}
		}
	}
	if err := r.removeOwnTaint(ctx, rem, node); err != nil {
		return err
	}
	if rem.Spec.Fencing.Delegate != nil {
		if err := r.delegate().Delete(ctx, rem); err != nil {
			return err
		}
	}
	// The CR's series go with its finalizer; a CR deleted without it loses
	// them in the pass that finds it gone (Reconcile).
	r.Metrics.SetFencingBlocked(rem.UID, "")
	r.Metrics.ForgetPhase(client.ObjectKeyFromObject(rem))

	log.Info("Removing finalizer")
	patch := client.MergeFromWithOptions(rem.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(rem, Finalizer)
	if err := r.Client.Patch(ctx, rem, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing finalizer: %w", err))
	}
	// Not forgotten: a cached copy from before the deletion must not pass
	// for current until the cache sees the CR go (ownWrites).
	r.own.saw(rem)
	return nil
}

// removeOwnTaint removes the out-of-service taint this remediation added,
// on deletion and once its work is done (failover.OwnTaintDone), through
// the one function that removes it (release.RemoveOwnedTaint).
func (r *Reconciler) removeOwnTaint(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node *corev1.Node) error {
	taint := release.OutOfServiceTaint()
	if node == nil || release.TaintOwner(node, taint) != rem.UID {
		return nil
	}
	// Ours by the node's own record, whatever status says: the taint and
	// the annotation naming it were written together.
	logf.FromContext(ctx).Info("Removing taint added by this remediation", "taint", taint.ToString())
	if err := release.RemoveOwnedTaint(ctx, r.Client, node, taint, rem.UID); err != nil {
		return err
	}
	events.NormalEvent(r.Recorder, node, EventTaintRemoved, "Removed "+taint.ToString()+" added by S3GWRemediation "+rem.Name)
	events.NormalEvent(r.Recorder, rem, EventTaintRemoved, "Removed "+taint.ToString()+" from node "+node.Name)
	return nil
}
