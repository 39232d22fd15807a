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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// InvalidSelectorError is a workloadSelector the API server accepted but
// that does not parse (e.g. an invalid label key); retrying cannot fix it.
type InvalidSelectorError struct{ Err error }

func (e *InvalidSelectorError) Error() string { return "invalid workloadSelector: " + e.Err.Error() }

func (e *InvalidSelectorError) Unwrap() error { return e.Err }

// List lists the pods matching the spec's selector in its namespaces, on
// node when node is not empty. The API server filters by label and node.
//
// From a cache, the pods are not deep-copied: they share their maps and
// slices with the informer's store, so callers only read them. Each pass of
// the protection report lists every gateway, and at a thousand nodes those
// copies were the largest owner of the manager's peak heap.
func List(ctx context.Context, reader client.Reader, spec s3gwv1alpha1.S3GWRemediationSpec, node string) ([]corev1.Pod, error) {
	selector, err := selectorOf(spec)
	if err != nil {
		return nil, err
	}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: selector}, client.UnsafeDisableDeepCopy}
	if node != "" {
		opts = append(opts, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("spec.nodeName", node)})
	}
	namespaces := spec.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var pods []corev1.Pod
	for _, ns := range namespaces {
		list := &corev1.PodList{}
		if err := reader.List(ctx, list, append(opts, client.InNamespace(ns))...); err != nil {
			return nil, fmt.Errorf("listing s3gw pods in namespace %q: %w", ns, err)
		}
		if len(namespaces) == 1 {
			return list.Items, nil // no second copy of every Pod struct
		}
		pods = append(pods, list.Items...)
	}
	return pods, nil
}

// selectorOf is the spec's workloadSelector, parsed; an
// InvalidSelectorError when it does not parse.
func selectorOf(spec s3gwv1alpha1.S3GWRemediationSpec) (labels.Selector, error) {
	selector, err := metav1.LabelSelectorAsSelector(spec.WorkloadSelectorOrDefault())
	if err != nil {
		return nil, &InvalidSelectorError{Err: err}
	}
	return selector, nil
}

// Protected says why the controller never touches a pod, whatever the
// selector matches: a DaemonSet's pod, a static pod's mirror, or a pod in
// the Longhorn namespace (force-deleting those, or releasing their
// volumes, harms the node or the storage itself). "" when it may.
func Protected(pod *corev1.Pod, longhornNamespace string) string {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return "a static pod's mirror"
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "DaemonSet" {
		return "owned by DaemonSet " + ref.Name
	}
	if pod.Namespace == longhornNamespace {
		return "in the Longhorn namespace " + longhornNamespace
	}
	return ""
}

// Presence is whether a target pod is still in the API.
type Presence struct {
	// Present is true while a pod with the target's UID exists.
	Present bool
	// ForceDeleted is true when that pod was already deleted with grace
	// period 0 and only finalizers hold it.
	ForceDeleted bool
	// Finalizers are the pod's finalizers.
	Finalizers []string
}

// Present reports whether the pod with this UID still exists in the API.
func Present(ctx context.Context, reader client.Reader, t s3gwv1alpha1.RecordedTarget) (Presence, error) {
	if t.UID == "" {
		return Presence{}, nil // found after its pod was gone
	}
	pod := &corev1.Pod{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, pod)
	if err != nil || pod.UID != t.UID {
		return Presence{}, client.IgnoreNotFound(err)
	}
	return Presence{Present: true, ForceDeleted: heldByFinalizers(pod), Finalizers: pod.Finalizers}, nil
}

// heldByFinalizers reports whether the pod was deleted with grace period 0
// and only finalizers keep it. Without finalizers such a pod is a force
// delete cut short: kube-apiserver stores grace 0 first and removes the pod
// in a second step, and a client killed in between leaves it there. Another
// delete finishes it (registry/rest.BeforeDelete), so it must be sent.
func heldByFinalizers(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil &&
		*pod.DeletionGracePeriodSeconds == 0 && len(pod.Finalizers) > 0
}
