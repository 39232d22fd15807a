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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// podVolume is one Longhorn volume a pod uses.
type podVolume struct {
	pvName string
	handle string // Longhorn volume name
}

// podLonghornVolumes resolves a pod's PVCs to the Longhorn volumes behind
// them. hasClaims says whether the pod uses PVCs at all; bound is false while
// one of them is not yet bound, so the answer is incomplete.
func podLonghornVolumes(ctx context.Context, c client.Client, pod *corev1.Pod) (vols []podVolume, hasClaims, bound bool, err error) {
	bound = true
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		hasClaims = true
		var pvc corev1.PersistentVolumeClaim
		err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: v.PersistentVolumeClaim.ClaimName}, &pvc)
		if apierrors.IsNotFound(err) || (err == nil && (pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "")) {
			bound = false
			continue
		}
		if err != nil {
			return nil, hasClaims, false, fmt.Errorf("getting PersistentVolumeClaim %s/%s: %w", pod.Namespace, v.PersistentVolumeClaim.ClaimName, err)
		}
		var pv corev1.PersistentVolume
		if err := c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
			if apierrors.IsNotFound(err) {
				bound = false
				continue
			}
			return nil, hasClaims, false, fmt.Errorf("getting PersistentVolume %s: %w", pvc.Spec.VolumeName, err)
		}
		if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == longhorn.CSIDriverName {
			vols = append(vols, podVolume{pvName: pv.Name, handle: pv.Spec.CSI.VolumeHandle})
		}
	}
	return vols, hasClaims, bound, nil
}

// podTerminal reports whether the pod's containers have finished for good;
// the kubelet no longer needs its volumes.
func podTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
