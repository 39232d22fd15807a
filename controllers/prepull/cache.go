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

package prepull

import (
	"context"
	"fmt"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
)

// NewCache returns the cache of the pre-pull DaemonSets and their pods,
// added to the manager. It is a cache of its own because the manager's
// caches pods by the workload label (--workload-cache-selector), and one
// cache holds one label selector per kind. Both kinds are selected by
// prepull.Label, so memory follows the gateways and their candidate
// nodes, not the cluster, and both are trimmed to what is read: a
// DaemonSet to its metadata (it is rewritten whole when its spec hash
// changes), a pod to its node, its images annotation and the state of its
// containers (docs/warm-replacement.md, "Cost").
func NewCache(ctx context.Context, mgr manager.Manager) (cache.Cache, error) {
	marked, err := labels.NewRequirement(prepull.Label, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.NewSelector().Add(*marked),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:       {Transform: trimPod},
			&appsv1.DaemonSet{}: {Transform: trimDaemonSet},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the pre-pull cache: %w", err)
	}
	if err := c.IndexField(ctx, &corev1.Pod{}, prepull.DaemonSetIndex, func(obj client.Object) []string {
		return []string{obj.GetLabels()[prepull.Label]}
	}); err != nil {
		return nil, fmt.Errorf("indexing pre-pull pods: %w", err)
	}
	if err := mgr.Add(managedCache{c}); err != nil {
		return nil, err
	}
	return c, nil
}

// managedCache makes the manager start the cache with its own, before any
// controller, and wait until it is in sync.
type managedCache struct{ cache.Cache }

func (c managedCache) GetCache() cache.Cache { return c.Cache }

// trimObjectMeta keeps identity, version, deletion, the named labels and
// annotations. What every pod of a DaemonSet repeats (namespace,
// label and annotation keys and values) is kept once (intern): a gateway's
// pods are as many as its candidate nodes.
func trimObjectMeta(m *metav1.ObjectMeta, keepLabels []string, annotations ...string) {
	kept := map[string]string{}
	for _, key := range annotations {
		if v, ok := m.Annotations[key]; ok {
			kept[intern(key)] = intern(v)
		}
	}
	keptLabels := map[string]string{}
	for _, key := range keepLabels {
		if v, ok := m.Labels[key]; ok {
			keptLabels[intern(key)] = intern(v)
		}
	}
	*m = metav1.ObjectMeta{Namespace: intern(m.Namespace), Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
		Labels: keptLabels, Annotations: kept}
}

// intern returns the one shared copy of s.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// managedByLabel marks the DaemonSets the operator wrote.
const managedByLabel = "app.kubernetes.io/managed-by"

func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	trimObjectMeta(&pod.ObjectMeta, []string{prepull.Label}, prepull.ImagesAnnotation)
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName}
	var ready []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionStatus(intern(string(c.Status)))}}
		}
	}
	status := corev1.PodStatus{Phase: corev1.PodPhase(intern(string(pod.Status.Phase))), Reason: intern(pod.Status.Reason), Conditions: ready}
	// A Ready pod holds its images: its containers' states say nothing
	// more, and most pre-pull pods are Ready.
	if len(ready) == 0 || ready[0].Status != corev1.ConditionTrue {
		status.InitContainerStatuses = trimStatuses(pod.Status.InitContainerStatuses)
		status.ContainerStatuses = trimStatuses(pod.Status.ContainerStatuses)
	}
	pod.Status = status
	return pod, nil
}

// trimStatuses keeps each container's name and state: why it waits,
// whether it runs, how it ended.
func trimStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, s := range in {
		out[i].Name = intern(s.Name)
		if w := s.State.Waiting; w != nil {
			out[i].State.Waiting = &corev1.ContainerStateWaiting{Reason: intern(w.Reason), Message: w.Message}
		}
		if s.State.Running != nil {
			out[i].State.Running = &corev1.ContainerStateRunning{}
		}
		if t := s.State.Terminated; t != nil {
			out[i].State.Terminated = &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: intern(t.Reason)}
		}
	}
	return out
}

func trimDaemonSet(obj any) (any, error) {
	ds, ok := obj.(*appsv1.DaemonSet)
	if !ok {
		return obj, nil
	}
	trimObjectMeta(&ds.ObjectMeta, []string{prepull.Label, managedByLabel}, prepull.SpecHashAnnotation, prepull.TemplatesAnnotation)
	ds.Spec, ds.Status = appsv1.DaemonSetSpec{}, appsv1.DaemonSetStatus{}
	return ds, nil
}
