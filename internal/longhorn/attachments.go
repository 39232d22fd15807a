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

package longhorn

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UniqueVolumeName is how kubelet and the attach-detach controller name a
// CSI volume in node.status.volumesInUse and volumesAttached.
func UniqueVolumeName(volumeHandle string) corev1.UniqueVolumeName {
	return corev1.UniqueVolumeName("kubernetes.io/csi/" + CSIDriverName + "^" + volumeHandle)
}

// NodeAttachments returns the storage.k8s.io VolumeAttachments of Longhorn's
// driver on the node that name a PersistentVolume.
func NodeAttachments(ctx context.Context, reader client.Reader, node string) ([]storagev1.VolumeAttachment, error) {
	list := &storagev1.VolumeAttachmentList{}
	if err := reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing VolumeAttachments: %w", err)
	}
	var out []storagev1.VolumeAttachment
	for _, va := range list.Items {
		if va.Spec.Attacher == CSIDriverName && va.Spec.NodeName == node && va.Spec.Source.PersistentVolumeName != nil {
			out = append(out, va)
		}
	}
	return out, nil
}

// OfVolume keeps the attachments of one PersistentVolume (normally one,
// named csi-<sha256>).
func OfVolume(vas []storagev1.VolumeAttachment, pv string) []storagev1.VolumeAttachment {
	var out []storagev1.VolumeAttachment
	for _, va := range vas {
		if *va.Spec.Source.PersistentVolumeName == pv {
			out = append(out, va)
		}
	}
	return out
}

// KubeAttachments returns Longhorn's VolumeAttachments for the PV on the node.
func KubeAttachments(ctx context.Context, reader client.Reader, pv, node string) ([]storagev1.VolumeAttachment, error) {
	vas, err := NodeAttachments(ctx, reader, node)
	return OfVolume(vas, pv), err
}

// DeleteKubeAttachments deletes the PV's VolumeAttachments on the node, each
// preconditioned on its UID. The external-attacher then unpublishes the
// volume, which removes Longhorn's ticket. It returns how many it deleted.
func DeleteKubeAttachments(ctx context.Context, reader client.Reader, c client.Client, pv, node string) (int, error) {
	vas, err := KubeAttachments(ctx, reader, pv, node)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for i := range vas {
		va := &vas[i]
		if va.DeletionTimestamp != nil {
			continue
		}
		uid := va.UID
		err := c.Delete(ctx, va, client.Preconditions{UID: &uid})
		switch {
		case err == nil:
			deleted++
		case apierrors.IsNotFound(err):
		default:
			return deleted, fmt.Errorf("deleting VolumeAttachment %s: %w", va.Name, err)
		}
	}
	return deleted, nil
}

// InUse reports whether node.status.volumesInUse lists the volume.
func InUse(node *corev1.Node, volumeHandle string) bool {
	return slices.Contains(node.Status.VolumesInUse, UniqueVolumeName(volumeHandle))
}

// UnmarkInUse removes the volumes from the node's status.volumesInUse, so the
// attach-detach controller sees them unmounted and detaches them through its
// own safe path. Only a dead kubelet's list may be edited: a live kubelet
// would rewrite it. The patch is optimistic-locked on the node's
// resourceVersion, so it never overwrites a concurrent change.
func UnmarkInUse(ctx context.Context, c client.Client, node *corev1.Node, volumeHandles []string) (int, error) {
	drop := map[corev1.UniqueVolumeName]bool{}
	for _, h := range volumeHandles {
		drop[UniqueVolumeName(h)] = true
	}
	kept := make([]corev1.UniqueVolumeName, 0, len(node.Status.VolumesInUse))
	for _, v := range node.Status.VolumesInUse {
		if !drop[v] {
			kept = append(kept, v)
		}
	}
	removed := len(node.Status.VolumesInUse) - len(kept)
	if removed == 0 {
		return 0, nil
	}
	patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
	node.Status.VolumesInUse = kept
	if err := c.Status().Patch(ctx, node, patch); err != nil {
		return 0, fmt.Errorf("removing %d volume(s) from status.volumesInUse of node %s: %w", removed, node.Name, err)
	}
	return removed, nil
}
