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

package workloads

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// Reasons a volume is left alone.
const (
	SkipClaimMissing  = "the PersistentVolumeClaim does not exist"
	SkipClaimUnbound  = "the PersistentVolumeClaim is not bound"
	SkipVolumeMissing = "the bound PersistentVolume does not exist"
	SkipNotLonghorn   = "not a driver.longhorn.io CSI volume"
	SkipNotRWO        = "not ReadWriteOnce: a shared volume needs no release"
)

// Volumes classifies each PVC of the pod: only bound, ReadWriteOnce (or
// ReadWriteOncePod) volumes of Longhorn's CSI driver are to be released.
func Volumes(ctx context.Context, reader client.Reader, pod *corev1.Pod) ([]s3gwv1alpha1.RecordedVolume, error) {
	var out []s3gwv1alpha1.RecordedVolume
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		tv, err := classify(ctx, reader, pod.Namespace, vol.PersistentVolumeClaim.ClaimName)
		if err != nil {
			return nil, err
		}
		out = append(out, tv)
	}
	return out, nil
}

func classify(ctx context.Context, reader client.Reader, namespace, claimName string) (s3gwv1alpha1.RecordedVolume, error) {
	tv := s3gwv1alpha1.RecordedVolume{ClaimName: claimName}
	pvc := &corev1.PersistentVolumeClaim{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: claimName}, pvc); err != nil {
		if apierrors.IsNotFound(err) {
			tv.SkipReason = SkipClaimMissing
			return tv, nil
		}
		return tv, fmt.Errorf("getting PersistentVolumeClaim %s/%s: %w", namespace, claimName, err)
	}
	if pvc.Spec.VolumeName == "" || pvc.Status.Phase != corev1.ClaimBound {
		tv.SkipReason = SkipClaimUnbound
		return tv, nil
	}
	tv.PersistentVolume = pvc.Spec.VolumeName
	pv := &corev1.PersistentVolume{}
	if err := reader.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		if apierrors.IsNotFound(err) {
			tv.SkipReason = SkipVolumeMissing
			return tv, nil
		}
		return tv, fmt.Errorf("getting PersistentVolume %s: %w", pvc.Spec.VolumeName, err)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != longhorn.CSIDriverName {
		tv.SkipReason = SkipNotLonghorn
		return tv, nil
	}
	tv.LonghornVolume = pv.Spec.CSI.VolumeHandle
	if !exclusive(pv.Spec.AccessModes) {
		tv.SkipReason = SkipNotRWO
		return tv, nil
	}
	return tv, nil
}

// exclusive is true for volumes only one node may attach.
func exclusive(modes []corev1.PersistentVolumeAccessMode) bool {
	if slices.Contains(modes, corev1.ReadWriteMany) || slices.Contains(modes, corev1.ReadOnlyMany) {
		return false
	}
	return slices.Contains(modes, corev1.ReadWriteOnce) || slices.Contains(modes, corev1.ReadWriteOncePod)
}
