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

package attachrules

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// MountAllowed reports whether the kubelet on node mounts a volume the
// attach-detach controller attaches: only once the node reports the volume
// in status.volumesInUse (so the controller will not detach it
// underneath), the controller lists it in status.volumesAttached, and its
// VolumeAttachment (va, nil when missing) is attached and not being
// deleted.
func MountAllowed(node *corev1.Node, volumeHandle string, va *storagev1.VolumeAttachment) bool {
	name := longhorn.UniqueVolumeName(volumeHandle)
	listed := slices.ContainsFunc(node.Status.VolumesAttached, func(a corev1.AttachedVolume) bool { return a.Name == name })
	return reportedInUse(node, volumeHandle) && listed &&
		va != nil && va.Status.Attached && va.DeletionTimestamp.IsZero()
}

// reportedInUse reports whether the node's kubelet lists the volume in
// status.volumesInUse: mounted, or about to be, as far as the attach-detach
// controller knows.
func reportedInUse(node *corev1.Node, volumeHandle string) bool {
	return slices.Contains(node.Status.VolumesInUse, longhorn.UniqueVolumeName(volumeHandle))
}
