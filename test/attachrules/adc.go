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
)

// OutOfService reports whether the node carries the
// node.kubernetes.io/out-of-service taint. The attach-detach controller
// looks at the key only, whatever the value and effect.
func OutOfService(node *corev1.Node) bool {
	return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeOutOfService })
}

// ADCDetaches reports whether the attach-detach controller detaches the
// volume from the node. It never does while a pod bound to the node in the
// API uses the volume (usedByPodOnNode; a terminating pod on a dead node
// still counts). Otherwise it detaches once the node's kubelet no longer
// lists the volume in status.volumesInUse, or at once, unverified, when the
// node is out of service. Its 6-minute force detach from a node that is
// not Ready is left out (see the package doc).
func ADCDetaches(node *corev1.Node, volumeHandle string, usedByPodOnNode bool) bool {
	if usedByPodOnNode {
		return false
	}
	return OutOfService(node) || !reportedInUse(node, volumeHandle)
}

// MultiAttachAllowed reports whether the attach-detach controller lets a
// PersistentVolume with these access modes be attached to several nodes at
// once: when it has no access modes (it cannot tell) or one of them is
// ReadWriteMany or ReadOnlyMany (IsMultiAttachAllowed in kubernetes
// pkg/volume/util). ReadWriteOnce and ReadWriteOncePod volumes attach to
// one node at a time.
func MultiAttachAllowed(accessModes []corev1.PersistentVolumeAccessMode) bool {
	return len(accessModes) == 0 ||
		slices.Contains(accessModes, corev1.ReadWriteMany) || slices.Contains(accessModes, corev1.ReadOnlyMany)
}

// MultiAttach reports whether the attach-detach controller refuses, for
// now, to attach the volume to node (the "Multi-Attach error" or "Waiting
// for detach" FailedAttachVolume event): the volume does not allow
// multi-attach and is attached to another node. attachedTo lists the nodes
// the volume is attached to.
func MultiAttach(accessModes []corev1.PersistentVolumeAccessMode, attachedTo []string, node string) bool {
	if MultiAttachAllowed(accessModes) {
		return false
	}
	return slices.ContainsFunc(attachedTo, func(n string) bool { return n != node })
}
