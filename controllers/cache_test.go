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
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/internal/watches"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// The cache's transforms may drop only what no read uses: every read of a
// trimmed object must equal the same read of the object as the API serves
// it, and the trimmed object must be smaller.

var (
	t0         = metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	lastApply  = map[string]string{corev1.LastAppliedConfigAnnotation: `{"a":"long document"}`}
	ownedBy    = map[string]string{attachments.TaintOwnerAnnotation: "rem-uid", "node.alpha.kubernetes.io/ttl": "0"}
	managedBy  = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1"}}
	controlled = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "s3gw-7d9", UID: "rs-uid", Controller: ptr.To(true)}}
)

func fullNode() *corev1.Node {
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: "Kubelet" + string(t), Message: "kubelet says so at length",
			LastHeartbeatTime: t0, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-uid", ResourceVersion: "42", CreationTimestamp: t0,
			Labels:      map[string]string{"topology.kubernetes.io/zone": "z1", "kubernetes.io/hostname": "node-a"},
			Annotations: merged(ownedBy, lastApply), ManagedFields: managedBy},
		Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24", ProviderID: "kwok://node-a", Taints: []corev1.Taint{
			{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &t0},
			{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute, TimeAdded: &t0},
		}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{cond(corev1.NodeMemoryPressure, corev1.ConditionFalse),
				cond(corev1.NodeReady, corev1.ConditionUnknown), cond(corev1.NodeDiskPressure, corev1.ConditionFalse)},
			Capacity:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32")},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
			NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "SUSE Linux Enterprise Micro"},
			Images:          []corev1.ContainerImage{{Names: []string{"quay.io/s3gw/s3gw:v0.23.0"}, SizeBytes: 1 << 28}},
			VolumesInUse:    []corev1.UniqueVolumeName{longhorn.UniqueVolumeName("pvc-1")},
			VolumesAttached: []corev1.AttachedVolume{{Name: longhorn.UniqueVolumeName("pvc-1"), DevicePath: "/dev/longhorn/pvc-1"}},
		},
	}
}

func merged(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// trimmed returns a trimmed deep copy of obj and checks it shrank.
func trimmed[T interface {
	client.Object
	DeepCopyObject() runtime.Object
}](g Gomega, trim func(any) (any, error), obj T) T {
	out, err := trim(obj.DeepCopyObject())
	g.Expect(err).NotTo(HaveOccurred())
	small := out.(T)
	g.Expect(approxSize(small)).To(BeNumerically("<", approxSize(obj)), "the transform kept everything")
	return small
}

// approxSize is the object's JSON size, a stand-in for its memory.
func approxSize(obj runtime.Object) int {
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return len(data)
}

func TestTrimmedNodeReadsTheSame(t *testing.T) {
	g := NewWithT(t)
	full := fullNode()
	small := trimmed(g, trimNode, full)
	reads := func(n *corev1.Node) []any {
		return []any{n.Name, n.UID, n.ResourceVersion, n.Labels, storage.Heartbeat(n, nil), watches.ReadyCondition(n),
			attachments.TaintOwner(n, attachments.OutOfServiceTaint()), attachments.FindTaint(n, attachments.OutOfServiceTaint()),
			attachments.InUse(n, "pvc-1"), n.Spec.Taints, n.Status.VolumesInUse}
	}
	g.Expect(reads(small)).To(Equal(reads(full)))
	// The watch predicates (remediation's and protection's, built on
	// watches.ReadyCondition, taints, volumesInUse and labels) see the same
	// changes.
	changed := full.DeepCopy()
	changed.Status.Conditions[1].Status = corev1.ConditionFalse
	g.Expect(watches.ReadyCondition(trimmed(g, trimNode, changed))).NotTo(Equal(watches.ReadyCondition(small)))
	heartbeatOnly := full.DeepCopy()
	heartbeatOnly.Status.Conditions[1].LastHeartbeatTime = metav1.NewTime(t0.Add(time.Minute))
	g.Expect(watches.ReadyCondition(trimmed(g, trimNode, heartbeatOnly))).To(Equal(watches.ReadyCondition(small)))
}

func TestTrimmedLeaseReadsTheSame(t *testing.T) {
	g := NewWithT(t)
	renewed := metav1.NewMicroTime(t0.Time)
	full := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: corev1.NamespaceNodeLease, Name: "node-a", ResourceVersion: "7",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: "node-uid"}},
			ManagedFields:   managedBy},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-a"), LeaseDurationSeconds: ptr.To(int32(40)), RenewTime: &renewed},
	}
	full.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "coordination.k8s.io/v1", Time: ptr.To(metav1.NewTime(t0.Add(-time.Second))),
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:renewTime":{}}}`)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "coordination.k8s.io/v1", Time: ptr.To(t0),
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:holderIdentity":{}}}`)},
	}
	small := trimmed(g, trimLease, full)
	g.Expect(storage.Heartbeat(nil, small)).To(Equal(storage.Heartbeat(nil, full)))
	g.Expect(storage.Heartbeat(nil, small).LeaseWritten).To(Equal(t0.Time), "kube-apiserver's stamp of the last write, whoever wrote it")
	g.Expect(small.ManagedFields).To(HaveLen(1))
	stripped := full.DeepCopy()
	stripped.ManagedFields = nil
	g.Expect(trimmed(g, trimLease, stripped).ManagedFields).To(BeEmpty())
	g.Expect(storage.Heartbeat(nil, small).Lagging(t0.Add(30 * time.Second))).To(BeTrue())
}

func TestTrimmedPodReadsTheSame(t *testing.T) {
	g := NewWithT(t)
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw", Name: "s3gw-7d9-x", UID: "pod-uid", Labels: map[string]string{"app.kubernetes.io/name": "s3gw"},
			Annotations: merged(lastApply, map[string]string{corev1.MirrorPodAnnotationKey: "x"}), OwnerReferences: controlled,
			Finalizers: []string{"example.com/hold"}, DeletionTimestamp: &t0, DeletionGracePeriodSeconds: ptr.To(int64(0))},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "s3gw", Image: "quay.io/s3gw/s3gw", Args: []string{"--rgw-dns-name", "s3"}}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "s3gw-pvc"}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s3gw-config"}}}},
			}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.42.0.7",
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t0}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "s3gw", Ready: true, RestartCount: 3}}},
	}
	small := trimmed(g, trimPod, full)
	target := s3gwv1alpha1.RecordedTarget{Namespace: full.Namespace, Name: full.Name, UID: full.UID}
	reads := func(p *corev1.Pod) []any {
		present, err := workloads.Present(context.Background(), fake.NewClientBuilder().WithObjects(p).Build(), target)
		claims := []string{}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				claims = append(claims, v.PersistentVolumeClaim.ClaimName)
			}
		}
		return []any{p.Labels, p.Annotations[corev1.MirrorPodAnnotationKey], metav1.GetControllerOf(p), p.Finalizers,
			p.DeletionTimestamp, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions, present, err, claims}
	}
	g.Expect(reads(small)).To(Equal(reads(full)))
}

func TestTrimmedStorageReadsTheSame(t *testing.T) {
	g := NewWithT(t)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw", Name: "s3gw-pvc", Annotations: merged(lastApply,
			map[string]string{"volume.kubernetes.io/storage-provisioner": longhorn.CSIDriverName}), ManagedFields: managedBy},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pvc-1", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("longhorn"), Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-1", Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": longhorn.CSIDriverName}},
		Spec: corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			ClaimRef: &corev1.ObjectReference{Namespace: "s3gw", Name: "s3gw-pvc"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: longhorn.CSIDriverName,
				VolumeHandle: "pvc-1", FSType: "ext4", VolumeAttributes: map[string]string{"numberOfReplicas": "3", "staleReplicaTimeout": "30"}}}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-123", Finalizers: []string{"external-attacher/driver-longhorn-io"}},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: longhorn.CSIDriverName, NodeName: "node-a",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pvc-1")}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"devicePath": "/dev/longhorn/pvc-1"}},
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw", Name: "s3gw-7d9-x"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "s3gw-pvc"}}}}}}
	reads := func(objs ...client.Object) []any {
		c := fake.NewClientBuilder().WithObjects(objs...).Build()
		volumes, err := workloads.Volumes(context.Background(), c, pod)
		onNode, attErr := attachments.NodeAttachments(context.Background(), c, "node-a")
		ofVolume := attachments.OfVolume(onNode, "pvc-1")
		names := make([]string, 0, len(ofVolume))
		for _, a := range ofVolume {
			names = append(names, a.Name+" "+a.Spec.Attacher+" "+a.Spec.NodeName)
		}
		return []any{volumes, err, names, attErr}
	}
	g.Expect(reads(trimmed(g, trimClaim, pvc), trimmed(g, trimPersistentVolume, pv), trimmed(g, trimVolumeAttachment, va))).
		To(Equal(reads(pvc, pv, va)))
	g.Expect(reads(pvc, pv, va)[0]).To(HaveLen(1), "the volume is found at all")
}

func TestTrimmedLonghornNodeReadsTheSame(t *testing.T) {
	g := NewWithT(t)
	cond := func(t, s, reason string) longhorn.Condition {
		return longhorn.Condition{Type: t, Status: s, Reason: reason, Message: "longhorn-manager says so at length",
			LastProbeTime: t0.String(), LastTransitionTime: t0}
	}
	full := &longhorn.Node{ObjectMeta: metav1.ObjectMeta{Namespace: "longhorn-system", Name: "node-a", Finalizers: []string{"longhorn.io"},
		Annotations: lastApply, ManagedFields: managedBy},
		Status: longhorn.NodeStatus{Conditions: []longhorn.Condition{cond("Schedulable", "True", ""),
			cond(longhorn.NodeConditionReady, "False", longhorn.NodeReasonKubernetesNodeNotReady), cond("MountPropagation", "True", "")}}}
	small := trimmed(g, trimLonghornNode, full)
	read := func(n *longhorn.Node) longhorn.NodeReadiness {
		s := runtime.NewScheme()
		g.Expect(longhorn.AddToScheme(s)).To(Succeed())
		readiness, err := longhorn.State{Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(n).Build(),
			Namespace: "longhorn-system"}.NodeReadiness(context.Background(), "node-a")
		g.Expect(err).NotTo(HaveOccurred())
		return readiness
	}
	g.Expect(read(small)).To(Equal(read(full)))
	g.Expect(failover.LonghornNode{Found: read(small).Found, Status: read(small).Status, Reason: read(small).Reason}.Down()).
		To(BeTrue())
	// Protection's watch predicate compares the Ready condition's status and
	// reason: a change survives the trim.
	changed := full.DeepCopy()
	changed.Status.Conditions[1].Status = "True"
	g.Expect(read(trimmed(g, trimLonghornNode, changed))).NotTo(Equal(read(small)))
}

func TestTrimmedInstanceManagerReadsTheSame(t *testing.T) {
	g := NewWithT(t)
	full := &longhorn.InstanceManager{
		ObjectMeta: metav1.ObjectMeta{Namespace: "longhorn-system", Name: "instance-manager-0a1b", UID: "im-uid", ResourceVersion: "9",
			Labels: map[string]string{"longhorn.io/component": "instance-manager", "longhorn.io/instance-manager-type": "aio",
				longhorn.InstanceManagerNodeLabel: "node-a"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "longhorn.io/v1beta2", Kind: "Node", Name: "node-a", UID: "lh-node-uid"}},
			Annotations:     lastApply, ManagedFields: managedBy},
		Spec: longhorn.InstanceManagerSpec{NodeID: "node-a"},
		Status: longhorn.InstanceManagerStatus{CurrentState: "running", InstanceReplicas: map[string]longhorn.InstanceProcess{
			"pvc-1-r-1": {Status: longhorn.InstanceProcessStatus{State: "running"}},
			"pvc-2-r-1": {Status: longhorn.InstanceProcessStatus{State: "stopped"}}}},
	}
	small := trimmed(g, trimInstanceManager, full)
	// instanceManagersOn reads a node's by spec.nodeID (through the index
	// of instance_manager_index_test.go), then their names and status.
	g.Expect(small.Name).To(Equal(full.Name))
	g.Expect(small.Spec).To(Equal(full.Spec))
	g.Expect(small.Status).To(Equal(full.Status))
	g.Expect(small.Labels).To(BeNil(), "read by nobody")
}
