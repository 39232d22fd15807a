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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

func TestMayReplace(t *testing.T) {
	pod := func(kind, owner, claim string) *corev1.Pod {
		p := &corev1.Pod{}
		if kind != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: owner, Controller: ptr.To(true)}}
		}
		if claim != "" {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
		}
		return p
	}
	deployment := s3gwv1alpha1.RecordedTarget{
		Owner:   &s3gwv1alpha1.WorkloadOwner{Kind: kindDeployment, Name: "gw1-s3gw", ReplicaSet: "gw1-s3gw-5d8f7"},
		Volumes: []s3gwv1alpha1.RecordedVolume{{ClaimName: "gw1-s3gw-pvc"}},
	}
	statefulSet := s3gwv1alpha1.RecordedTarget{Owner: &s3gwv1alpha1.WorkloadOwner{Kind: "StatefulSet", Name: "gw"}}
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		target s3gwv1alpha1.RecordedTarget
		want   bool
	}{
		{"the target's ReplicaSet", pod(kindReplicaSet, "gw1-s3gw-5d8f7", ""), deployment, true},
		{"a ReplicaSet a rollout created", pod(kindReplicaSet, "gw1-s3gw-7c9d4", ""), deployment, true},
		{"an adopted ReplicaSet with the target's claim", pod(kindReplicaSet, "adopted", "gw1-s3gw-pvc"), deployment, true},
		// The scale benchmark's case: one namespace, many gateways.
		{"another gateway's ReplicaSet", pod(kindReplicaSet, "gw10-s3gw-5d8f7", "gw10-s3gw-pvc"), deployment, false},
		{"an unowned pod", pod("", "", "gw1-s3gw-pvc"), deployment, false},
		{"a StatefulSet target: sameOwner decides without a read", pod("StatefulSet", "other", ""), statefulSet, true},
		{"a target without an owner", pod(kindReplicaSet, "gw1-s3gw-5d8f7", ""), s3gwv1alpha1.RecordedTarget{}, false},
	} {
		if got := mayReplace(tc.pod, tc.target); got != tc.want {
			t.Errorf("%s: mayReplace = %v, want %v", tc.name, got, tc.want)
		}
	}
}
