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

package worldmodel

import (
	"crypto/sha256"
	"encoding/hex"
	"iter"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// Typed access to stored objects for the model's components. They mutate
// what they get and call store.touch.

const (
	longhornNamespace = "longhorn-system"
	leaseNamespace    = corev1.NamespaceNodeLease
	gatewayNamespace  = "s3gw"
	// remediationNamespace holds the templates, hence NHC's and the
	// delegate's CRs.
	remediationNamespace = "remediation"
	claimVolumeName      = "s3gw-lh-store"
)

func getAs[T client.Object](k *kindStore, namespace, name string) T {
	obj, _ := k.objs[objKey{namespace, name}].(T)
	return obj
}

func listAs[T client.Object](k *kindStore) []T {
	objs := k.list()
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(T))
	}
	return out
}

func (s *store) node(name string) *corev1.Node { return getAs[*corev1.Node](s.k.nodes, "", name) }

func (s *store) lease(node string) *coordinationv1.Lease {
	return getAs[*coordinationv1.Lease](s.k.leases, leaseNamespace, node)
}

// pods iterates the stored pods without copying the list.
func (s *store) pods() iter.Seq2[int, *corev1.Pod] {
	return func(yield func(int, *corev1.Pod) bool) {
		for i, o := range s.k.pods.list() {
			if !yield(i, o.(*corev1.Pod)) {
				return
			}
		}
	}
}

func (s *store) podByUID(uid types.UID) *corev1.Pod {
	for _, o := range s.k.pods.list() {
		if o.GetUID() == uid {
			return o.(*corev1.Pod)
		}
	}
	return nil
}

func (s *store) kubeAttachment(name string) *storagev1.VolumeAttachment {
	return getAs[*storagev1.VolumeAttachment](s.k.kubeAttachments, "", name)
}

func (s *store) kubeAttachments() []*storagev1.VolumeAttachment {
	return listAs[*storagev1.VolumeAttachment](s.k.kubeAttachments)
}

func (s *store) longhornNode(name string) *longhorn.Node {
	return getAs[*longhorn.Node](s.k.longhornNodes, longhornNamespace, name)
}

func (s *store) longhornVolume(name string) *longhorn.Volume {
	return getAs[*longhorn.Volume](s.k.longhornVolumes, longhornNamespace, name)
}

func (s *store) longhornReplica(name string) *longhorn.Replica {
	return getAs[*longhorn.Replica](s.k.longhornReplicas, longhornNamespace, name)
}

func (s *store) longhornEngine(name string) *longhorn.Engine {
	return getAs[*longhorn.Engine](s.k.longhornEngines, longhornNamespace, name)
}

func (s *store) longhornAttachment(name string) *longhorn.VolumeAttachment {
	return getAs[*longhorn.VolumeAttachment](s.k.longhornAttachments, longhornNamespace, name)
}

func (s *store) longhornInstanceManager(node string) *longhorn.InstanceManager {
	return s.instanceManager(instanceManagerName(node))
}

func (s *store) instanceManager(name string) *longhorn.InstanceManager {
	return getAs[*longhorn.InstanceManager](s.k.longhornInstanceManagers, longhornNamespace, name)
}

func (s *store) remediations() []*s3gwv1alpha1.S3GWRemediation {
	return listAs[*s3gwv1alpha1.S3GWRemediation](s.k.remediations)
}

// readyCondition is the node's Ready condition, or nil (also for a
// missing node).
func readyCondition(n *corev1.Node) *corev1.NodeCondition {
	if n == nil {
		return nil
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	c := readyCondition(n)
	return c != nil && c.Status == corev1.ConditionTrue
}

func outOfService(n *corev1.Node) bool {
	if n == nil {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeOutOfService {
			return true
		}
	}
	return false
}

// attachmentName is the storage.k8s.io VolumeAttachment name for a CSI
// volume on a node, also the Longhorn CSI ticket ID.
func attachmentName(handle, node string) string {
	sum := sha256.Sum256([]byte(handle + longhorn.CSIDriverName + node))
	return "csi-" + hex.EncodeToString(sum[:])
}

// claimOf returns the PVC name a pod mounts as its s3gw store, or "".
func claimOf(p *corev1.Pod) string {
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

func podTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }
