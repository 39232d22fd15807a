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
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Orphans finds s3gw volumes still attached to the failed node whose pod is
// already gone from the API — deleted by a fencing remediator's
// ResourceDeletion or by hand — while the replacement waits on another node
// (Multi-Attach). Each becomes a target without a pod: its volume still has
// to be released. A volume counts only if a pod matching the selector, in an
// allowed namespace and not on the failed node, uses its claim. covered
// holds the PersistentVolumes existing targets already release; attached
// are Longhorn's VolumeAttachments on the node (release.NodeAttachments).
func Orphans(ctx context.Context, reader client.Reader, spec s3gwv1alpha1.S3GWRemediationSpec, node string,
	attached []storagev1.VolumeAttachment, covered map[string]bool) ([]s3gwv1alpha1.RecordedTarget, error) {
	var out []s3gwv1alpha1.RecordedTarget
	for _, va := range attached {
		source := va.Spec.Source.PersistentVolumeName
		if covered[*source] {
			continue
		}
		target, err := orphan(ctx, reader, spec, node, *source)
		if err != nil {
			return nil, err
		}
		if target != nil {
			covered[*source] = true
			out = append(out, *target)
		}
	}
	return out, nil
}

func orphan(ctx context.Context, reader client.Reader, spec s3gwv1alpha1.S3GWRemediationSpec, node, pvName string) (*s3gwv1alpha1.RecordedTarget, error) {
	pv := &corev1.PersistentVolume{}
	if err := reader.Get(ctx, client.ObjectKey{Name: pvName}, pv); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	claim := pv.Spec.ClaimRef
	if claim == nil || (len(spec.Namespaces) > 0 && !slices.Contains(spec.Namespaces, claim.Namespace)) {
		return nil, nil
	}
	narrowed := spec
	narrowed.Namespaces = []string{claim.Namespace}
	pods, err := List(ctx, reader, narrowed, "")
	if err != nil {
		return nil, err
	}
	for i := range pods {
		pod := &pods[i]
		if pod.Spec.NodeName == node || !usesClaim(pod, claim.Name) {
			continue
		}
		owner, err := Owner(ctx, reader, pod)
		if err != nil {
			return nil, err
		}
		volume, err := classify(ctx, reader, claim.Namespace, claim.Name)
		if err != nil {
			return nil, err
		}
		return &s3gwv1alpha1.RecordedTarget{Namespace: claim.Namespace, Owner: owner,
			Volumes: []s3gwv1alpha1.RecordedVolume{volume}}, nil
	}
	return nil, nil
}

func usesClaim(pod *corev1.Pod, claim string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}
