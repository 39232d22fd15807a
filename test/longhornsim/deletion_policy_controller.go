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
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// attachmentDeletionRecheck is how soon Longhorn looks again at a pod whose
// VolumeAttachments it asked to delete.
const attachmentDeletionRecheck = time.Second

// podDeletionPolicyReconciler emulates longhorn-manager's
// handlePodDeletionIfNodeDown under node-down-pod-deletion-policy
// delete-deployment-pod: for a terminating ReplicaSet pod with Longhorn
// volumes on a node Longhorn sees down, it first deletes the pod's
// storage.k8s.io VolumeAttachments on that node, and once they are gone and
// the grace period has passed, force-deletes the pod.
type podDeletionPolicyReconciler struct {
	client client.Client
	now    func() time.Time
	// namespaces, when not empty, limits the policy to pods in them.
	namespaces []string
}

// inScope reports whether the policy applies to pods in namespace.
func (r *podDeletionPolicyReconciler) inScope(namespace string) bool {
	return len(r.namespaces) == 0 || slices.Contains(r.namespaces, namespace)
}

var _ reconcile.Reconciler = &podDeletionPolicyReconciler{}

func (r *podDeletionPolicyReconciler) setupWithManager(mgr ctrl.Manager) error {
	terminating := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return !o.GetDeletionTimestamp().IsZero() && r.inScope(o.GetNamespace())
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("longhornsim-pod-deletion-policy").
		For(&corev1.Pod{}, builder.WithPredicates(terminating)).
		// A node going down makes its terminating pods eligible.
		Watches(&longhorn.Node{}, handler.EnqueueRequestsFromMapFunc(r.terminatingPodsOnNode)).
		Complete(quietOnStop{r})
}

func (r *podDeletionPolicyReconciler) terminatingPodsOnNode(ctx context.Context, o client.Object) []reconcile.Request {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.MatchingFields{podNodeNameField: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing pods failed", "Node", klog.KRef("", o.GetName()))
		return nil
	}
	var reqs []reconcile.Request
	for i := range pods.Items {
		if !pods.Items[i].DeletionTimestamp.IsZero() && r.inScope(pods.Items[i].Namespace) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pods.Items[i])})
		}
	}
	return reqs
}

func (r *podDeletionPolicyReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pod.DeletionTimestamp.IsZero() || !ownedByReplicaSet(pod) || pod.Spec.NodeName == "" || !r.inScope(pod.Namespace) {
		return ctrl.Result{}, nil
	}
	vols, _, _, err := podLonghornVolumes(ctx, r.client, pod)
	if err != nil || len(vols) == 0 {
		return ctrl.Result{}, err
	}
	down, err := r.longhornNodeDown(ctx, pod.Spec.NodeName)
	if err != nil || !down {
		return ctrl.Result{}, err
	}

	log := ctrl.LoggerFrom(ctx)
	remaining, err := r.attachmentsOnNode(ctx, pod.Spec.NodeName, vols)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(remaining) > 0 {
		for i := range remaining {
			va := &remaining[i]
			if !va.DeletionTimestamp.IsZero() {
				continue
			}
			log.Info("Deleting VolumeAttachment of pod on down node", "VolumeAttachment", klog.KObj(va), "Node", klog.KRef("", pod.Spec.NodeName))
			if err := r.client.Delete(ctx, va); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting VolumeAttachment %s: %w", va.Name, err)
			}
		}
		return ctrl.Result{RequeueAfter: attachmentDeletionRecheck}, nil
	}

	if wait := pod.DeletionTimestamp.Sub(r.now()); wait >= 0 {
		return ctrl.Result{RequeueAfter: wait + 10*time.Millisecond}, nil
	}
	log.Info("Force deleting pod on down node")
	err = r.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return ctrl.Result{}, fmt.Errorf("force deleting Pod %s: %w", req, err)
	}
	return ctrl.Result{}, nil
}

func (r *podDeletionPolicyReconciler) longhornNodeDown(ctx context.Context, name string) (bool, error) {
	var n longhorn.Node
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, &n); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("getting Longhorn Node %s: %w", name, err)
	}
	return nodeDown(&n), nil
}

// attachmentsOnNode lists the Longhorn VolumeAttachments of vols on node.
func (r *podDeletionPolicyReconciler) attachmentsOnNode(ctx context.Context, node string, vols []podVolume) ([]storagev1.VolumeAttachment, error) {
	var vas storagev1.VolumeAttachmentList
	if err := r.client.List(ctx, &vas, client.MatchingFields{attachmentNodeNameField: node}); err != nil {
		return nil, fmt.Errorf("listing VolumeAttachments on %s: %w", node, err)
	}
	var matching []storagev1.VolumeAttachment
	for _, va := range vas.Items {
		if va.Spec.Attacher != longhorn.CSIDriverName || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		for _, v := range vols {
			if *va.Spec.Source.PersistentVolumeName == v.pvName {
				matching = append(matching, va)
			}
		}
	}
	return matching, nil
}

func ownedByReplicaSet(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.Kind == "ReplicaSet"
}
