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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Controller kinds a target's owner can have.
const (
	kindReplicaSet = "ReplicaSet"
	kindDeployment = "Deployment"
)

// Owner resolves the workload that recreates the pod: the Deployment of its
// ReplicaSet, its StatefulSet, or a bare ReplicaSet. Nil for an unowned pod,
// which nothing would replace.
func Owner(ctx context.Context, reader client.Reader, pod *corev1.Pod) (*s3gwv1alpha1.WorkloadOwner, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return nil, nil
	}
	if ref.Kind != kindReplicaSet {
		return &s3gwv1alpha1.WorkloadOwner{Kind: ref.Kind, Name: ref.Name}, nil
	}
	deployment, err := replicaSetOwner(ctx, reader, pod.Namespace, ref.Name)
	if err != nil {
		return nil, err
	}
	if deployment == "" {
		return &s3gwv1alpha1.WorkloadOwner{Kind: kindReplicaSet, Name: ref.Name, ReplicaSet: ref.Name}, nil
	}
	return &s3gwv1alpha1.WorkloadOwner{Kind: kindDeployment, Name: deployment, ReplicaSet: ref.Name}, nil
}

// replicaSetOwner returns the name of the Deployment controlling a
// ReplicaSet, or "" if none does (or the ReplicaSet is gone).
func replicaSetOwner(ctx context.Context, reader client.Reader, namespace, name string) (string, error) {
	rs := &appsv1.ReplicaSet{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, rs); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("getting ReplicaSet %s/%s: %w", namespace, name, err)
	}
	if ref := metav1.GetControllerOf(rs); ref != nil && ref.Kind == kindDeployment {
		return ref.Name, nil
	}
	return "", nil
}

// sameOwner reports whether pod belongs to the target's workload.
func sameOwner(ctx context.Context, reader client.Reader, pod *corev1.Pod, owner *s3gwv1alpha1.WorkloadOwner) (bool, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || owner == nil {
		return false, nil
	}
	switch owner.Kind {
	case kindDeployment:
		if ref.Kind != kindReplicaSet {
			return false, nil
		}
		if ref.Name == owner.ReplicaSet {
			return true, nil
		}
		// A rollout may have created a new ReplicaSet meanwhile.
		deployment, err := replicaSetOwner(ctx, reader, pod.Namespace, ref.Name)
		return deployment == owner.Name, err
	default:
		return ref.Kind == owner.Kind && ref.Name == owner.Name, nil
	}
}
