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
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// NodeAttachments returns the storage.k8s.io VolumeAttachments of Longhorn's
// driver on the node that name a PersistentVolume. They are the reader's
// own objects when it is a cache: read them, never modify them.
func NodeAttachments(ctx context.Context, reader client.Reader, node string) ([]storagev1.VolumeAttachment, error) {
	list := &storagev1.VolumeAttachmentList{}
	// Every step of every remediation lists them all: no deep copy of
	// every attachment in the cluster for the few on one node.
	if err := reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing VolumeAttachments: %w", err)
	}
	var out []storagev1.VolumeAttachment
	for _, va := range list.Items {
		if va.Spec.Attacher == longhorn.CSIDriverName && va.Spec.NodeName == node && va.Spec.Source.PersistentVolumeName != nil {
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

// VolumeAttachments returns Longhorn's VolumeAttachments for the PV on the node.
func VolumeAttachments(ctx context.Context, reader client.Reader, pv, node string) ([]storagev1.VolumeAttachment, error) {
	vas, err := NodeAttachments(ctx, reader, node)
	return OfVolume(vas, pv), err
}

// DeleteVolumeAttachment deletes a VolumeAttachment a step observed on the
// failed node, as the decision saw it: preconditioned on its UID, so a
// VolumeAttachment re-created under the same name since is never touched.
// It reports whether it deleted it. No read first: the step's observation
// (from the cache) is the read, and the manager needs no get on the API.
func DeleteVolumeAttachment(ctx context.Context, c client.Writer, name string, uid types.UID) (bool, error) {
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, va, client.Preconditions{UID: &uid}); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return false, nil // gone meanwhile, or another one by that name now
		}
		return false, fmt.Errorf("deleting VolumeAttachment %s: %w", name, err)
	}
	return true, nil
}
