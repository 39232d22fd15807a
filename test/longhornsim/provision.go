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

package longhornsim

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
)

// ProvisionedVolume names the objects CreateVolume made.
type ProvisionedVolume struct {
	// Namespace and PVCName name the claim workloads mount.
	Namespace, PVCName string
	// Name is the PV name, the CSI volume handle, and the name of the
	// Longhorn Volume and Longhorn VolumeAttachment: pvc-<claim UID>.
	Name string
	// Replicas are the Longhorn Replica names, one per replica node.
	Replicas []string
}

// CreateVolume provisions a Longhorn volume the way Longhorn's CSI
// provisioner does: it creates the claim, then the Longhorn Volume with its
// Engine, Replicas (one per entry of replicaNodes, healthy) and
// VolumeAttachment, and finally the PV pre-bound to the claim, and returns
// once kube-controller-manager has bound the claim.
func (s *Simulator) CreateVolume(ctx context.Context, namespace, pvcName string, size resource.Quantity,
	accessMode corev1.PersistentVolumeAccessMode, replicaNodes []string) (*ProvisionedVolume, error) {
	// Longhorn schedules replicas only to nodes it has registered as Ready.
	if err := s.waitForLonghornNodes(ctx, replicaNodes); err != nil {
		return nil, err
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pvcName},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{accessMode},
			StorageClassName: ptr.To(StorageClassName),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if err := s.client.Create(ctx, pvc); err != nil {
		return nil, fmt.Errorf("creating PersistentVolumeClaim %s/%s: %w", namespace, pvcName, err)
	}
	return s.provision(ctx, pvc, replicaNodes)
}

// ProvisionClaim is Longhorn's CSI provisioner for a claim someone else
// creates (a Helm chart, kubectl): it waits for the claim, then provisions
// it as CreateVolume does, under the claim's StorageClass, whose reclaim
// policy and revision counter parameter the PV and Volume get. The
// simulator reads no other parameter: replicaNodes say where Longhorn
// would put the replicas, and a clone's data source is not copied (it
// holds no data).
func (s *Simulator) ProvisionClaim(ctx context.Context, namespace, pvcName string, replicaNodes []string) (*ProvisionedVolume, error) {
	if err := s.waitForLonghornNodes(ctx, replicaNodes); err != nil {
		return nil, err
	}
	pvc := &corev1.PersistentVolumeClaim{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: pvcName}, pvc)
		return err == nil && pvc.DeletionTimestamp == nil && pvc.Spec.StorageClassName != nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for PersistentVolumeClaim %s/%s to provision: %w", namespace, pvcName, err)
	}
	return s.provision(ctx, pvc, replicaNodes)
}

// provision creates the claim's Longhorn Volume, its Engine, Replicas and
// VolumeAttachment, and the PV pre-bound to the claim, and waits until
// kube-controller-manager has bound it.
func (s *Simulator) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim, replicaNodes []string) (*ProvisionedVolume, error) {
	name := "pvc-" + string(pvc.UID)
	pv := &ProvisionedVolume{Namespace: pvc.Namespace, PVCName: pvc.Name, Name: name}

	className := ptr.Deref(pvc.Spec.StorageClassName, StorageClassName)
	class := &storagev1.StorageClass{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: className}, class); err != nil {
		return nil, fmt.Errorf("reading StorageClass %s: %w", className, err)
	}
	if class.Provisioner != longhorn.CSIDriverName {
		return nil, fmt.Errorf("StorageClass %s is provisioned by %s, not Longhorn", className, class.Provisioner)
	}
	revisionCounterDisabled, err := revisionCounterDisabled(class.Parameters)
	if err != nil {
		return nil, fmt.Errorf("StorageClass %s: %w", className, err)
	}
	accessMode := corev1.ReadWriteOnce
	if len(pvc.Spec.AccessModes) > 0 {
		accessMode = pvc.Spec.AccessModes[0]
	}
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	volume := &longhorn.Volume{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
		Spec: longhorn.VolumeSpec{NumberOfReplicas: len(replicaNodes), AccessMode: longhornAccessMode(accessMode),
			RevisionCounterDisabled: revisionCounterDisabled},
	}
	if err := s.client.Create(ctx, volume); err != nil {
		return nil, fmt.Errorf("creating Longhorn Volume %s: %w", name, err)
	}
	volume.Status = longhorn.VolumeStatus{State: stateDetached, Robustness: robustnessHealthy}
	if len(replicaNodes) > 0 {
		volume.Status.OwnerID = replicaNodes[0]
	}
	if err := s.client.Status().Update(ctx, volume); err != nil {
		return nil, fmt.Errorf("initialising Longhorn Volume %s status: %w", name, err)
	}

	owned := []client.Object{newEngine(volume), newLonghornAttachment(volume)}
	now := time.Now().UTC().Format(time.RFC3339)
	for i, node := range replicaNodes {
		r := newReplica(volume, i, node, now)
		pv.Replicas = append(pv.Replicas, r.Name)
		owned = append(owned, r)
	}
	for _, obj := range owned {
		if err := s.client.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}

	pvObj := newPersistentVolume(pvc, name, size, accessMode, len(replicaNodes))
	pvObj.Spec.StorageClassName = className
	if class.ReclaimPolicy != nil {
		pvObj.Spec.PersistentVolumeReclaimPolicy = *class.ReclaimPolicy
	}
	if err := s.client.Create(ctx, pvObj); err != nil {
		return nil, fmt.Errorf("creating PersistentVolume %s: %w", name, err)
	}
	if err := s.waitBound(ctx, pvc); err != nil {
		return nil, err
	}
	return pv, nil
}

func (s *Simulator) waitForLonghornNodes(ctx context.Context, names []string) error {
	for _, name := range names {
		var n longhorn.Node
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			err := s.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, &n)
			return err == nil && attachrules.LonghornNodeReady(&n), client.IgnoreNotFound(err)
		})
		if err != nil {
			return fmt.Errorf("waiting for Longhorn Node %s to be Ready (conditions %+v): %w", name, n.Status.Conditions, err)
		}
	}
	return nil
}

func (s *Simulator) waitBound(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); err != nil {
			return false, err
		}
		return pvc.Status.Phase == corev1.ClaimBound, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for PersistentVolumeClaim %s/%s to bind (phase %q): %w", pvc.Namespace, pvc.Name, pvc.Status.Phase, err)
	}
	return nil
}

func longhornAccessMode(m corev1.PersistentVolumeAccessMode) string {
	if m == corev1.ReadWriteMany {
		return "rwx"
	}
	return "rwo"
}

func ownedBy(v *longhorn.Volume) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: Namespace,
		Labels:    map[string]string{longhorn.VolumeLabel: v.Name},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: longhorn.GroupVersion.String(), Kind: "Volume", Name: v.Name, UID: v.UID,
		}},
	}
}

func newEngine(v *longhorn.Volume) *longhorn.Engine {
	meta := ownedBy(v)
	meta.Name = v.Name + "-e-0"
	return &longhorn.Engine{
		ObjectMeta: meta,
		Spec:       longhorn.EngineSpec{VolumeName: v.Name, DesireState: instanceStopped},
	}
}

// disableRevisionCounterKey is the StorageClass parameter Longhorn's CSI
// provisioner reads into Volume.spec.revisionCounterDisabled.
const disableRevisionCounterKey = "disableRevisionCounter"

// revisionCounterDisabled is longhorn-manager's csi/util.go getVolumeOptions
// for the revision counter: the StorageClass parameter if set, else
// defaultStorageClassDisableRevisionCounterParameter, true.
func revisionCounterDisabled(params map[string]string) (bool, error) {
	value, ok := params[disableRevisionCounterKey]
	if !ok {
		return true, nil
	}
	disabled, err := strconv.ParseBool(value)
	if err != nil {
		return false, fmt.Errorf("invalid parameter %s: %w", disableRevisionCounterKey, err)
	}
	return disabled, nil
}

// newReplica is longhorn-manager's controller/utils.go newReplicaCR: the
// replica keeps the volume's revision counter setting of its creation.
func newReplica(v *longhorn.Volume, index int, node, healthyAt string) *longhorn.Replica {
	meta := ownedBy(v)
	meta.Name = v.Name + "-r-" + strconv.Itoa(index)
	return &longhorn.Replica{
		ObjectMeta: meta,
		Spec: longhorn.ReplicaSpec{
			NodeID: node, VolumeName: v.Name, HealthyAt: healthyAt, DesireState: instanceStopped,
			RevisionCounterDisabled: v.Spec.RevisionCounterDisabled,
		},
	}
}

// newLonghornAttachment is the empty ticket holder Longhorn creates with
// every volume.
func newLonghornAttachment(v *longhorn.Volume) *longhorn.VolumeAttachment {
	meta := ownedBy(v)
	meta.Name = v.Name
	return &longhorn.VolumeAttachment{ObjectMeta: meta, Spec: longhorn.VolumeAttachmentSpec{Volume: v.Name}}
}

// newPersistentVolume is the PV Longhorn's provisioner creates, pre-bound to
// the claim through claimRef.
func newPersistentVolume(pvc *corev1.PersistentVolumeClaim, name string, size resource.Quantity,
	accessMode corev1.PersistentVolumeAccessMode, replicas int) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": longhorn.CSIDriverName},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{accessMode},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              StorageClassName,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver:       longhorn.CSIDriverName,
				VolumeHandle: name,
				FSType:       "ext4",
				VolumeAttributes: map[string]string{
					"numberOfReplicas":    strconv.Itoa(replicas),
					"staleReplicaTimeout": "30",
				},
			}},
		},
	}
}
