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

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
)

// reconcileDelete runs when NHC deletes the CR (node healthy again, or
// gone), whether the remediation finished, failed or was timed out: every
// release strategy's adapter removes what its writes left on the node for
// this remediation (the out-of-service taint the node's owner annotation
// names), every enabled evidence source's adapter deletes what its actions
// created (the delegate's fencer CR), then the finalizer goes. It never
// deletes the CR itself.
func (r *Reconciler) reconcileDelete(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node *corev1.Node) error {
	if !controllerutil.ContainsFinalizer(rem, Finalizer) {
		return nil
	}
	s := &scope{rem: rem, nodeName: rem.Status.NodeName, node: node}
	if node != nil {
		s.nodeName = node.Name
	}
	if err := attachments.CleanUp(ctx, r.attachmentsWrite(s), r.announce(s)); err != nil {
		return err
	}
	in := fencing.Input{Client: r.Client, Delegate: r.delegate(), Remediation: rem, Node: s.nodeName}
	if err := fencing.CleanUp(ctx, in); err != nil {
		return err
	}
	// The CR's series go with its finalizer; a CR deleted without it loses
	// them in the step that finds it gone (Reconcile).
	r.Metrics.SetFencingBlocked(rem.UID, "")
	r.Metrics.ForgetPhase(client.ObjectKeyFromObject(rem))

	logf.FromContext(ctx).Info("Removing finalizer")
	patch := client.MergeFromWithOptions(rem.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(rem, Finalizer)
	if err := r.Client.Patch(ctx, rem, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing finalizer: %w", err))
	}
	// Not forgotten: a cached copy from before the deletion must not pass
	// for current until the cache sees the CR go (ownwrites).
	r.own.Saw(rem)
	return nil
}
