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
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

// unboundClaimRetry is how soon a pod waiting for its PVC is looked at again.
const unboundClaimRetry = time.Second

// kubeletReconciler plays the volume half of the kubelet on every node whose
// simulated kubelet runs (kwok plays the rest). Per node it reports the
// volumes its pods need in status.volumesInUse, mounts a pod's volumes once
// the attach-detach controller reports them attached (setting
// cluster.VolumesMountedAnnotation, which lets kwok start the pod), and
// unmounts them when the pod is deleted. On a failed node it does nothing,
// so that node's state stays frozen as a dead kubelet leaves it.
//
// It is the only writer of node.status.volumesInUse and of the mount
// annotation; node.status.volumesAttached belongs to the attach-detach
// controller.
type kubeletReconciler struct {
	client client.Client
}

var _ reconcile.Reconciler = &kubeletReconciler{}

func (r *kubeletReconciler) setupWithManager(mgr ctrl.Manager) error {
	toNode := func(name string) []reconcile.Request {
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("longhornsim-kubelet").
		For(&corev1.Node{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			pod, ok := o.(*corev1.Pod)
			if !ok {
				return nil
			}
			return toNode(pod.Spec.NodeName)
		})).
		Watches(&storagev1.VolumeAttachment{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			va, ok := o.(*storagev1.VolumeAttachment)
			if !ok {
				return nil
			}
			return toNode(va.Spec.NodeName)
		})).
		Complete(quietOnStop{r})
}

func (r *kubeletReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	node := &corev1.Node{}
	if err := r.client.Get(ctx, req.NamespacedName, node); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !kubeletRunning(node) {
		return ctrl.Result{}, nil
	}
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.MatchingFields{podNodeNameField: node.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing pods on Node %s: %w", node.Name, err)
	}

	inUse := sets.New[corev1.UniqueVolumeName]()
	waitingForClaims := false

	for i := range pods.Items {
		pod := &pods.Items[i]
		if podTerminal(pod) {
			continue
		}
		vols, hasClaims, bound, err := podLonghornVolumes(ctx, r.client, pod)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !hasClaims {
			continue // kwok runs pods without claims on its own
		}
		mounted := pod.Annotations[cluster.VolumesMountedAnnotation] == "true"
		if !pod.DeletionTimestamp.IsZero() {
			// Containers stop, volumes are unmounted, then kwok removes the pod.
			if mounted {
				if err := r.setMounted(ctx, pod, false); err != nil {
					return ctrl.Result{}, err
				}
			}
			continue
		}
		for _, v := range vols {
			inUse.Insert(longhorn.UniqueVolumeName(v.handle))
		}
		if mounted {
			continue
		}
		if !bound {
			waitingForClaims = true
			continue
		}
		ready, err := r.readyToMount(ctx, node, vols)
		if err != nil {
			return ctrl.Result{}, err
		}
		if ready {
			if err := r.setMounted(ctx, pod, true); err != nil {
				return ctrl.Result{}, err
			}
		}
	}

	if err := r.reportVolumesInUse(ctx, node, inUse); err != nil {
		return ctrl.Result{}, err
	}
	if waitingForClaims {
		return ctrl.Result{RequeueAfter: unboundClaimRetry}, nil
	}
	return ctrl.Result{}, nil
}

// readyToMount applies attachrules.MountAllowed to each of the pod's
// volumes, as the node (status as read at the start of the pass) and the
// volume's VolumeAttachment show it.
func (r *kubeletReconciler) readyToMount(ctx context.Context, node *corev1.Node, vols []podVolume) (bool, error) {
	for _, v := range vols {
		va := &storagev1.VolumeAttachment{}
		err := r.client.Get(ctx, client.ObjectKey{Name: attachrules.AttachmentName(v.handle, node.Name)}, va)
		switch {
		case apierrors.IsNotFound(err):
			va = nil
		case err != nil:
			return false, fmt.Errorf("getting VolumeAttachment of %s on %s: %w", v.handle, node.Name, err)
		}
		if !attachrules.MountAllowed(node, v.handle, va) {
			return false, nil
		}
	}
	return true, nil
}

// setMounted sets or removes the mount annotation with a merge patch of that
// one key.
func (r *kubeletReconciler) setMounted(ctx context.Context, pod *corev1.Pod, mounted bool) error {
	var value any // JSON null removes the annotation
	if mounted {
		value = "true"
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{cluster.VolumesMountedAnnotation: value}}})
	if err != nil {
		return fmt.Errorf("encoding mount patch: %w", err)
	}
	msg := "Unmounting volumes"
	if mounted {
		msg = "Mounting volumes"
	}
	ctrl.LoggerFrom(ctx).V(1).Info(msg, "Pod", klog.KObj(pod))
	if err := r.client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("marking volumes of Pod %s/%s mounted=%v: %w", pod.Namespace, pod.Name, mounted, err)
	}
	return nil
}

// reportVolumesInUse writes node.status.volumesInUse, sorted as the kubelet
// writes it, when it changed.
func (r *kubeletReconciler) reportVolumesInUse(ctx context.Context, node *corev1.Node, inUse sets.Set[corev1.UniqueVolumeName]) error {
	want := sets.List(inUse)
	if slices.Equal(want, node.Status.VolumesInUse) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"volumesInUse": want}})
	if err != nil {
		return fmt.Errorf("encoding volumesInUse patch: %w", err)
	}
	if err := r.client.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("reporting volumes in use on Node %s: %w", node.Name, err)
	}
	return nil
}
