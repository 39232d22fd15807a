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

package controllers

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultWorkloadCacheSelector is the pod label the manager caches pods by:
// the s3gw chart puts it on every s3gw pod. Templates whose selector
// requires it are served from the cache and woken by pod events; others
// are read uncached and polled.
const DefaultWorkloadCacheSelector = "app.kubernetes.io/name=s3gw"

// DefaultWorkloadCache parses DefaultWorkloadCacheSelector.
func DefaultWorkloadCache() labels.Selector {
	sel, err := labels.Parse(DefaultWorkloadCacheSelector)
	if err != nil {
		panic(err) // a constant
	}
	return sel
}

// CacheOptions is what the manager caches, and how little of it: only the
// pods workloads selects, only node Leases, and nodes and pods trimmed to
// the fields the controllers read, so that memory follows the number of
// s3gw instances and nodes, not the cluster's pod count. Other kinds read
// through the cached client (PVCs and PVs, VolumeAttachments, our CRs,
// Longhorn's) are cached whole, without managed fields.
func CacheOptions(workloads labels.Selector) cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:           {Label: workloads, Transform: trimPod},
			&corev1.Node{}:          {Transform: trimNode},
			&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{corev1.NamespaceNodeLease: {}}},
		},
	}
}

// ClientOptions makes the manager's client read unstructured objects (other
// remediators' CRs and templates) from the cache too.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{Unstructured: true}}
}

// trimNode drops what a node carries that no controller here reads: its
// image list (often the biggest part), system info and daemon endpoints.
func trimNode(obj any) (any, error) {
	if node, ok := obj.(*corev1.Node); ok {
		node.ManagedFields = nil
		node.Status.Images, node.Status.NodeInfo = nil, corev1.NodeSystemInfo{}
		node.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{}
		node.Status.Capacity, node.Status.Allocatable = nil, nil
	}
	return obj, nil
}

// trimPod keeps what the remediation reads of a pod: identity, owners,
// finalizers, labels and annotations, its node, its claims and its Ready
// condition.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.ManagedFields = nil
	var claims []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims = append(claims, corev1.Volume{Name: v.Name,
				VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: v.PersistentVolumeClaim}})
		}
	}
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName, Volumes: claims}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, Conditions: pod.Status.Conditions}
	return pod, nil
}
