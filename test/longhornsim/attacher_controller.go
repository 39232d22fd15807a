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

package longhornsim

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
)

// publishRetryInterval is how soon a refused attach is retried, like the
// Longhorn CSI plugin polling every 2 s inside ControllerPublishVolume.
const publishRetryInterval = 2 * time.Second

// attacherReconciler plays Longhorn's csi-attacher sidecar together with the
// CSI plugin's ControllerPublish/UnpublishVolume. It is the only writer of
// storage.k8s.io VolumeAttachment status and of csi-attacher tickets; it
// shares VolumeAttachment finalizers with the API server and others, so it
// writes them under an optimistic lock.
type attacherReconciler struct {
	client client.Client
}

var _ reconcile.Reconciler = &attacherReconciler{}

func (r *attacherReconciler) setupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("longhornsim-csi-attacher").
		For(&storagev1.VolumeAttachment{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			va, ok := o.(*storagev1.VolumeAttachment)
			return ok && va.Spec.Attacher == longhorn.CSIDriverName
		}))).
		// A ticket's status decides when its VolumeAttachment is attached.
		Watches(&longhorn.VolumeAttachment{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			lhva, ok := o.(*longhorn.VolumeAttachment)
			if !ok {
				return nil
			}
			var reqs []reconcile.Request
			for _, t := range lhva.Spec.AttachmentTickets {
				if name, ok := attachrules.TicketAttachment(t); ok {
					reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
				}
			}
			return reqs
		})).
		Complete(quietOnStop{r})
}

func (r *attacherReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	va := &storagev1.VolumeAttachment{}
	if err := r.client.Get(ctx, req.NamespacedName, va); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if va.Spec.Attacher != longhorn.CSIDriverName || va.Spec.Source.PersistentVolumeName == nil {
		return ctrl.Result{}, nil // inline and migrated volumes are not Longhorn's
	}
	volume, err := r.volumeName(ctx, *va.Spec.Source.PersistentVolumeName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !va.DeletionTimestamp.IsZero() {
		return r.unpublish(ctx, va, volume)
	}
	// An attached VolumeAttachment is never published again, even when its
	// ticket has gone (external-attacher pkg/controller/csi_handler.go
	// syncAttach; Longhorn's CSI plugin has no LIST_VOLUMES_PUBLISHED_NODES,
	// so ReconcileVA never forces a resync). This is what lets a ticket be
	// removed first while the VolumeAttachment keeps holding the volume.
	if va.Status.Attached {
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(va, AttacherFinalizer) {
		base := va.DeepCopy()
		controllerutil.AddFinalizer(va, AttacherFinalizer)
		if err := patchIfChanged(ctx, r.client, va, base, true); err != nil {
			return conflictRetry(fmt.Errorf("adding finalizer to VolumeAttachment %s: %w", va.Name, err))
		}
	}
	return r.publish(ctx, va, volume)
}

// publish is ControllerPublishVolume: write the csi-attacher ticket, then
// report attached once Longhorn has satisfied it. It refuses, and is
// retried, while attachrules.PublishRefusal says so.
func (r *attacherReconciler) publish(ctx context.Context, va *storagev1.VolumeAttachment, volume string) (ctrl.Result, error) {
	node := va.Spec.NodeName
	lhva := &longhorn.VolumeAttachment{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: volume}, lhva); err != nil {
		if apierrors.IsNotFound(err) {
			return r.refuse(ctx, va, fmt.Sprintf("volume %s not found", volume))
		}
		return ctrl.Result{}, fmt.Errorf("getting Longhorn VolumeAttachment %s: %w", volume, err)
	}

	target, err := r.longhornNode(ctx, node)
	if err != nil {
		return ctrl.Result{}, err
	}
	if _, ok := lhva.Spec.AttachmentTickets[va.Name]; !ok {
		if msg := attachrules.PublishRefusal(target, nil, node); msg != "" {
			return r.refuse(ctx, va, msg)
		}
		return ctrl.Result{}, r.setTicket(ctx, volume, va.Name, attachrules.PublishTicket(va.Name, node)) // its status brings us back
	}

	if status := lhva.Status.AttachmentTicketStatuses[va.Name]; status != nil && status.Satisfied {
		return ctrl.Result{}, r.setStatus(ctx, va, true, nil)
	}
	var vol longhorn.Volume
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: volume}, &vol); err != nil {
		return ctrl.Result{}, fmt.Errorf("getting Longhorn Volume %s: %w", volume, err)
	}
	if msg := attachrules.PublishRefusal(target, &vol, node); msg != "" {
		return r.refuse(ctx, va, msg)
	}
	return ctrl.Result{}, nil // attaching; the satisfied ticket brings us back
}

// longhornNode returns the Longhorn Node of that name, or nil when missing.
func (r *attacherReconciler) longhornNode(ctx context.Context, name string) (*longhorn.Node, error) {
	n := &longhorn.Node{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting Longhorn Node %s: %w", name, err)
	}
	return n, nil
}

// unpublish is ControllerUnpublishVolume: remove the VolumeAttachment's own
// ticket (the one publish wrote, named after it; see
// attachrules.TicketAttachment) and let go of the VolumeAttachment. Like
// Longhorn's, it removes the ticket by ID without reading it first, and
// waits only for the ticket to be gone, not for the volume to detach.
func (r *attacherReconciler) unpublish(ctx context.Context, va *storagev1.VolumeAttachment, volume string) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(va, AttacherFinalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.setTicket(ctx, volume, va.Name, nil); err != nil {
		return ctrl.Result{}, err
	}
	base := va.DeepCopy()
	controllerutil.RemoveFinalizer(va, AttacherFinalizer)
	if err := patchIfChanged(ctx, r.client, va, base, true); err != nil {
		return conflictRetry(fmt.Errorf("removing finalizer from VolumeAttachment %s: %w", va.Name, err))
	}
	return ctrl.Result{}, nil
}

// refuse reports why the attach cannot proceed and retries later.
func (r *attacherReconciler) refuse(ctx context.Context, va *storagev1.VolumeAttachment, msg string) (ctrl.Result, error) {
	ctrl.LoggerFrom(ctx).V(1).Info("Refusing to attach", "reason", msg)
	if err := r.setStatus(ctx, va, false, &storagev1.VolumeError{Message: "rpc error: code = Aborted desc = " + msg}); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: publishRetryInterval}, nil
}

func (r *attacherReconciler) setStatus(ctx context.Context, va *storagev1.VolumeAttachment, attached bool, attachErr *storagev1.VolumeError) error {
	base := va.DeepCopy()
	va.Status.Attached = attached
	if attachErr != nil && (va.Status.AttachError == nil || va.Status.AttachError.Message != attachErr.Message) {
		attachErr.Time = metav1.Now()
		va.Status.AttachError = attachErr
	} else if attachErr == nil {
		va.Status.AttachError = nil
	}
	if err := patchStatusIfChanged(ctx, r.client, va, base); err != nil {
		return fmt.Errorf("updating VolumeAttachment %s status: %w", va.Name, err)
	}
	return nil
}

// setTicket adds (or, with nil, removes) one ticket by a merge patch of its
// map key, leaving other requesters' tickets alone.
func (r *attacherReconciler) setTicket(ctx context.Context, volume, id string, ticket *longhorn.AttachmentTicket) error {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"attachmentTickets": map[string]any{id: ticket}}})
	if err != nil {
		return fmt.Errorf("encoding ticket patch: %w", err)
	}
	lhva := &longhorn.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: volume}}
	err = r.client.Patch(ctx, lhva, client.RawPatch(types.MergePatchType, patch))
	if ticket == nil && apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("setting ticket %s on Longhorn VolumeAttachment %s: %w", id, volume, err)
	}
	return nil
}

// volumeName maps a PV to its Longhorn volume (the CSI volume handle).
func (r *attacherReconciler) volumeName(ctx context.Context, pvName string) (string, error) {
	var pv corev1.PersistentVolume
	if err := r.client.Get(ctx, client.ObjectKey{Name: pvName}, &pv); err != nil {
		if apierrors.IsNotFound(err) {
			return pvName, nil // dynamically provisioned: PV name == volume name
		}
		return "", fmt.Errorf("getting PersistentVolume %s: %w", pvName, err)
	}
	if pv.Spec.CSI != nil && pv.Spec.CSI.VolumeHandle != "" {
		return pv.Spec.CSI.VolumeHandle, nil
	}
	return pvName, nil
}
