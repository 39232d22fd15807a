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
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// DefaultSelector matches the s3gw Helm chart's gateway pods.
var DefaultSelector = &metav1.LabelSelector{MatchLabels: map[string]string{
	"app.kubernetes.io/name":      "s3gw",
	"app.kubernetes.io/component": "gateway",
}}

// Selector returns the spec's workload selector, or the default.
func Selector(spec s3gwv1alpha1.S3GWRemediationSpec) *metav1.LabelSelector {
	if spec.WorkloadSelector != nil {
		return spec.WorkloadSelector
	}
	return DefaultSelector
}

// List lists the pods matching the spec's selector in its namespaces, on
// node when node is not empty. The API server filters by label and node.
func List(ctx context.Context, reader client.Reader, spec s3gwv1alpha1.S3GWRemediationSpec, node string) ([]corev1.Pod, error) {
	selector, err := metav1.LabelSelectorAsSelector(Selector(spec))
	if err != nil {
		return nil, fmt.Errorf("parsing workloadSelector: %w", err)
	}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: selector}}
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
		pods = append(pods, list.Items...)
	}
	return pods, nil
}

// Presence is whether a target pod is still in the API.
type Presence struct {
	// Present is true while a pod with the target's UID exists.
	Present bool
	// ForceDeleted is true when that pod was already deleted with grace
	// period 0 and only finalizers hold it.
	ForceDeleted bool
}

// Present reports whether the pod with this UID still exists in the API.
func Present(ctx context.Context, reader client.Reader, t s3gwv1alpha1.TargetPod) (Presence, error) {
	if t.UID == "" {
		return Presence{}, nil // found after its pod was gone
	}
	pod := &corev1.Pod{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, pod)
	if err != nil || pod.UID != t.UID {
		return Presence{}, client.IgnoreNotFound(err)
	}
	return Presence{Present: true, ForceDeleted: heldByFinalizers(pod)}, nil
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
