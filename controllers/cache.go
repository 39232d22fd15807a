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
	"unique"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
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
// pods workloads selects, only node Leases, and every cached kind trimmed
// to the fields the controllers read, so that memory follows the number of
// s3gw instances and nodes, not the cluster's pod count, and a node costs
// a few hundred bytes per kind. Kinds without a transform here (our CRs,
// Longhorn's Volumes, Replicas and VolumeAttachments, other remediators'
// CRs) are cached whole, without managed fields. Every object the cache
// holds is only read, and written back only as a merge patch that names
// the fields it changes, so a field trimmed here is never written. A patch
// computed from a trimmed copy is not enough where the write deletes a map
// key: deleting the last key the trim kept nulls the whole map (every
// annotation of a node), so such writes are spelled out
// (release.patchTaints).
func CacheOptions(workloads labels.Selector) cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:  {Label: workloads, Transform: trimPod},
			&corev1.Node{}: {Transform: trimNode},
			// A field selector, not Namespaces: a namespace-scoped cache
			// asks the REST mapper on every read whether the kind is
			// namespaced, and Leases are read for every replica's node.
			&coordinationv1.Lease{}: {Field: fields.OneTermEqualSelector("metadata.namespace", corev1.NamespaceNodeLease),
				Transform: trimLease},
			&corev1.PersistentVolumeClaim{}: {Transform: trimClaim},
			&corev1.PersistentVolume{}:      {Transform: trimPersistentVolume},
			&storagev1.VolumeAttachment{}:   {Transform: trimVolumeAttachment},
			&longhorn.Node{}:                {Transform: trimLonghornNode},
			&longhorn.InstanceManager{}:     {Transform: trimInstanceManager},
			// The one Setting the protection report reads, in whichever
			// namespace Longhorn runs; the role may read no other.
			&longhorn.Setting{}: {Field: fields.OneTermEqualSelector("metadata.name", longhorn.SettingAutoSalvage)},
		},
	}
}

// ClientOptions makes the manager's client read unstructured objects (other
// remediators' CRs and templates) from the cache too.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{Unstructured: true}}
}

// trimMeta keeps an object's identity, its deletion, finalizers and owners
// (GetControllerOf), its labels (selectors) and only the named
// annotations; it drops managed fields and every other annotation
// (kubectl's last-applied-configuration can be the largest part). The
// namespace, the labels and the kept annotations' keys share one copy
// across objects (intern).
func trimMeta(m *metav1.ObjectMeta, annotations ...string) {
	var kept map[string]string
	for _, key := range annotations {
		if v, ok := m.Annotations[key]; ok {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[key] = v
		}
	}
	m.Annotations, m.ManagedFields = kept, nil
	m.Namespace = intern(m.Namespace)
	m.Labels = internedLabels(m.Labels, m.Name)
}

// trimToName is trimMeta for the kinds read only by name, once per node
// (Leases, Longhorn Nodes and instance managers): their UIDs, owners and
// finalizers are read by nobody.
func trimToName(m *metav1.ObjectMeta) {
	trimMeta(m)
	m.UID, m.OwnerReferences, m.Finalizers = "", nil, nil
}

// intern returns the one shared copy of s. A decoded object holds its own
// copy of every string, yet namespaces, label keys, zones and condition
// reasons and messages are the same on every node
// (docs/design/manager-memory.md).
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// internedLabels copies the labels in with shared keys and values. A
// value equal to the object's name (a node's kubernetes.io/hostname)
// shares the name's copy instead: a string found on one object only has
// nothing to share through the intern table.
func internedLabels(in map[string]string, name string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		if v == name {
			out[intern(k)] = name
		} else {
			out[intern(k)] = intern(v)
		}
	}
	return out
}

// trimInstanceManager keeps an instance manager's name and its typed view:
// its node (instanceManagersOn reads a node's by it, through an index), its
// state and its replica processes' states, those shared. Its labels (node,
// image, type, component) are read by nobody.
var trimInstanceManager = transform(func(im *longhorn.InstanceManager) {
	im.Labels = nil
	trimToName(&im.ObjectMeta)
	im.Status.CurrentState = intern(im.Status.CurrentState)
	for name, process := range im.Status.InstanceReplicas {
		process.Status.State = intern(process.Status.State)
		im.Status.InstanceReplicas[name] = process
	}
})

// transform adapts a trim of one kind to cache.TransformFunc.
func transform[T any](trim func(*T)) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		if o, ok := obj.(*T); ok {
			trim(o)
		}
		return obj, nil
	}
}

// trimNode keeps what the controllers read of a node: its labels
// (NodeHealthCheck selectors), our taint-owner annotation, its taints, its
// Ready condition (status, reason, heartbeat and transition times) and
// volumesInUse. Gone: images, system info, addresses, capacity, the other
// conditions (their heartbeats would otherwise rewrite the whole node's
// copy every kubelet status update), the CIDRs and the provider ID.
var trimNode = transform(func(node *corev1.Node) {
	trimMeta(&node.ObjectMeta, attachments.TaintOwnerAnnotation)
	node.Spec = corev1.NodeSpec{Taints: node.Spec.Taints}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		t.Key, t.Value, t.Effect = intern(t.Key), intern(t.Value), corev1.TaintEffect(intern(string(t.Effect)))
	}
	var ready []corev1.NodeCondition
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			c.Type, c.Status = corev1.NodeReady, corev1.ConditionStatus(intern(string(c.Status)))
			c.Reason, c.Message = intern(c.Reason), intern(c.Message)
			ready = []corev1.NodeCondition{c}
		}
	}
	node.Status = corev1.NodeStatus{Conditions: ready, VolumesInUse: node.Status.VolumesInUse}
})

// trimLease keeps a kubelet Lease's renewal: when and for how long, and
// when kube-apiserver stored it (storage.LastWrite), as the one
// managedFields entry left, with its time only.
var trimLease = transform(func(lease *coordinationv1.Lease) {
	written := storage.LastWrite(lease.ManagedFields)
	lease.Labels = nil
	trimToName(&lease.ObjectMeta)
	if !written.IsZero() {
		lease.ManagedFields = []metav1.ManagedFieldsEntry{{Time: ptr.To(metav1.NewTime(written))}}
	}
	lease.Spec = coordinationv1.LeaseSpec{RenewTime: lease.Spec.RenewTime, LeaseDurationSeconds: lease.Spec.LeaseDurationSeconds}
})

// trimPod keeps what the remediation reads of a pod: identity, owners,
// finalizers, labels, the mirror-pod annotation, its node, its claims and
// its phase and conditions; and what the pre-pull DaemonSet copies and the
// protection report's candidate nodes match: its containers' names and
// images, pull secrets, runtime class, node selector, required node
// affinity and tolerations.
var trimPod = transform(func(pod *corev1.Pod) {
	trimMeta(&pod.ObjectMeta, corev1.MirrorPodAnnotationKey)
	var claims []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims = append(claims, corev1.Volume{Name: v.Name,
				VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: v.PersistentVolumeClaim}})
		}
	}
	var affinity *corev1.Affinity
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution}}
	}
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName, Volumes: claims,
		InitContainers: trimContainers(pod.Spec.InitContainers), Containers: trimContainers(pod.Spec.Containers),
		ImagePullSecrets: pod.Spec.ImagePullSecrets, RuntimeClassName: pod.Spec.RuntimeClassName,
		NodeSelector: internedLabels(pod.Spec.NodeSelector, ""), Affinity: affinity, Tolerations: pod.Spec.Tolerations}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, Conditions: pod.Status.Conditions}
})

// trimContainers keeps each container's name and image, the image shared
// across pods.
func trimContainers(in []corev1.Container) []corev1.Container {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(in))
	for i, c := range in {
		out[i] = corev1.Container{Name: c.Name, Image: intern(c.Image)}
	}
	return out
}

// trimClaim keeps the volume a claim is bound to, and whether it is.
var trimClaim = transform(func(pvc *corev1.PersistentVolumeClaim) {
	trimMeta(&pvc.ObjectMeta)
	pvc.Spec = corev1.PersistentVolumeClaimSpec{VolumeName: pvc.Spec.VolumeName}
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: pvc.Status.Phase}
})

// trimPersistentVolume keeps a volume's access modes and its CSI driver
// and handle; Longhorn's volume attributes and the node affinity go.
var trimPersistentVolume = transform(func(pv *corev1.PersistentVolume) {
	trimMeta(&pv.ObjectMeta)
	spec := corev1.PersistentVolumeSpec{AccessModes: pv.Spec.AccessModes}
	if csi := pv.Spec.CSI; csi != nil {
		spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: csi.Driver, VolumeHandle: csi.VolumeHandle}
	}
	pv.Spec, pv.Status = spec, corev1.PersistentVolumeStatus{}
})

// trimVolumeAttachment keeps an attachment's attacher, node and volume,
// and its deletion and finalizers (metadata); its status (attach and
// detach errors, metadata) and inline volume specs go.
var trimVolumeAttachment = transform(func(va *storagev1.VolumeAttachment) {
	trimMeta(&va.ObjectMeta)
	va.Spec.Source.InlineVolumeSpec = nil
	va.Status = storagev1.VolumeAttachmentStatus{}
})

// trimLonghornNode keeps a Longhorn Node's Ready condition, its status and
// reason: whether Longhorn counts the node down.
var trimLonghornNode = transform(func(n *longhorn.Node) {
	trimToName(&n.ObjectMeta)
	var ready []longhorn.Condition
	for _, c := range n.Status.Conditions {
		if c.Type == longhorn.NodeConditionReady {
			ready = []longhorn.Condition{{Type: longhorn.NodeConditionReady, Status: intern(c.Status), Reason: intern(c.Reason)}}
		}
	}
	n.Status.Conditions = ready
})
