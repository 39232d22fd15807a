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
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// episodeStats is what an episode did, for the liveness figures and for
// attributing a lost write to the operator.
type episodeStats struct {
	// acts are the operator's destructive writes, per volume index.
	acts      map[int][]operatorAct
	succeeded bool
	moved     bool
	// foreignTaints are out-of-service taints the operator removed that
	// others added.
	foreignTaints []string
	// delegates are the fencing CRs the operator created, by name;
	// delegations their creation, per volume served on the node (no
	// destructive write itself: its fencer's recovery releases).
	delegates   map[string]bool
	delegations map[int][]operatorAct
}

// fencedByDelegate records, when the operator's delegate fencer powers a
// node off, the replicas there of volumes whose engine runs on another
// node: the fence stops them too, whatever they hold
// (attribution.go, unsignalledClasses).
func (w *World) fencedByDelegate(node string) {
	for _, v := range w.volumes {
		if v.current == nil || v.current.Node.Name == node {
			continue
		}
		for _, r := range v.Replicas {
			if r.Node.Name == node && r.Running {
				v.fencedByDelegate = append(v.fencedByDelegate, r)
			}
		}
	}
}

// operatorAct is one destructive write and the world it was made in.
type operatorAct struct {
	at   float64
	what string
	node string
	// evidence is the remediation's status.fencingEvidence at that time.
	evidence []string
}

// audit records the controller's committed writes: destructive ones
// (pod force delete, volumesInUse removal, VolumeAttachment delete,
// out-of-service taint, removal of Longhorn's csi ticket) per volume, and
// Succeeded; the releases and ticket removals time the targeted cuts.
func (w *World) audit(verb string, old, obj client.Object) {
	switch verb {
	case "delete":
		w.tracef("ctrl", "DELETE %s %s", w.api.gvkOf(old).Kind, old.GetName())
		w.auditDelete(old)
	case "create":
		w.tracef("ctrl", "CREATE %s %s", w.api.gvkOf(obj).Kind, obj.GetName())
		if w.api.gvkOf(obj) == gvkFAR {
			w.delegated(obj.GetName(), crNodeName(obj))
		}
	default:
		w.tracef("ctrl", "UPDATE %s %s", w.api.gvkOf(obj).Kind, obj.GetName())
		w.auditUpdate(old, obj)
	}
}

func (w *World) auditDelete(old client.Object) {
	switch o := old.(type) {
	case *corev1.Pod:
		if v := w.volumeOfClaim(claimOf(o)); v != nil {
			w.act(v, o.Spec.NodeName, "force-deleted pod "+o.Name)
		}
	case *storagev1.VolumeAttachment:
		if v := w.volumeByName(*o.Spec.Source.PersistentVolumeName); v != nil {
			w.act(v, o.Spec.NodeName, "deleted VolumeAttachment")
			w.released(v)
		}
	}
}

func (w *World) auditUpdate(old, obj client.Object) {
	switch o := obj.(type) {
	case *corev1.Node:
		before := old.(*corev1.Node)
		for _, u := range before.Status.VolumesInUse {
			if !slices.Contains(o.Status.VolumesInUse, u) {
				if v := w.volumeByName(strings.TrimPrefix(string(u), string(longhorn.UniqueVolumeName("")))); v != nil {
					w.act(v, o.Name, "removed from volumesInUse")
					w.released(v)
				}
			}
		}
		w.auditTaint(before, o)
	case *longhorn.VolumeAttachment:
		w.auditTickets(old.(*longhorn.VolumeAttachment), o)
	case *s3gwv1alpha1.S3GWRemediation:
		if meta.IsStatusConditionTrue(o.Status.Conditions, s3gwv1alpha1.ConditionSucceeded) {
			w.stats.succeeded = true
		}
		w.recordEvidence(o)
	}
}

// auditTaint records the out-of-service taint the operator adds (a
// destructive write for every volume attached there) and flags one it
// removes that someone else added: it must only undo its own.
func (w *World) auditTaint(before, after *corev1.Node) {
	switch {
	case outOfService(after) && !outOfService(before):
		w.taintedBy[after.Name] = operator
		for _, va := range w.api.kubeAttachments() {
			if v := w.volumeByName(*va.Spec.Source.PersistentVolumeName); va.Spec.NodeName == after.Name && v != nil {
				w.act(v, after.Name, "added the out-of-service taint")
				w.released(v)
			}
		}
	case outOfService(before) && !outOfService(after):
		if by := w.taintedBy[after.Name]; by != operator {
			w.stats.foreignTaints = append(w.stats.foreignTaints,
				fmt.Sprintf("removed the out-of-service taint %s added to %s at %.1fs", by, after.Name, w.seconds()))
		}
		delete(w.taintedBy, after.Name)
	}
}

// auditTickets records the csi-attacher tickets the operator removed from
// Longhorn's VolumeAttachment: Longhorn detaches the volume as after a CSI
// unpublish, so it is destructive, and it starts the two-step release.
func (w *World) auditTickets(before, after *longhorn.VolumeAttachment) {
	v := w.volumeByName(after.Spec.Volume)
	if v == nil {
		return
	}
	ids := slices.Sorted(maps.Keys(before.Spec.AttachmentTickets))
	for _, id := range ids {
		t := before.Spec.AttachmentTickets[id]
		if _, kept := after.Spec.AttachmentTickets[id]; kept || t == nil || t.Type != longhorn.TicketTypeCSIAttacher {
			continue
		}
		w.act(v, t.NodeID, "removed Longhorn's csi-attacher ticket")
		w.ticketRemoved(v, t.NodeID)
	}
}

const operator = "the operator"

// delegated records, when the operator creates its delegate fencing CR for
// a node, the replicas of the volumes served there that the API then
// showed out of Longhorn's reach: on that node, or on a node Kubernetes or
// Longhorn reports not Ready. The fencer's own recovery (FAR's
// ResourceDeletion, then the attach-detach controller's force detach, or
// its out-of-service taint) releases the volume whatever they hold
// (attribution.go, delegateReleaseClass).
func (w *World) delegated(name, node string) {
	if w.stats.delegates == nil {
		w.stats.delegates = map[string]bool{}
	}
	w.stats.delegates[name] = true
	for _, v := range w.volumes {
		if v.current == nil || v.current.Node.Name != node {
			continue
		}
		if w.stats.delegations == nil {
			w.stats.delegations = map[int][]operatorAct{}
		}
		w.stats.delegations[v.Index] = append(w.stats.delegations[v.Index],
			operatorAct{at: w.seconds(), what: "created delegate fencing CR " + name, node: node})
		for _, r := range v.Replicas {
			ready := longhornReady(w.api.longhornNode(r.Node.Name)).Status == statusTrue && nodeReady(w.api.node(r.Node.Name))
			if (r.Node.Name == node || !ready) && !slices.Contains(v.strandedAtDelegation, r) {
				v.strandedAtDelegation = append(v.strandedAtDelegation, r)
			}
		}
	}
}

// recordEvidence completes the acts of a pass with the evidence its
// status patch reports (the patch comes after the acts).
func (w *World) recordEvidence(rem *s3gwv1alpha1.S3GWRemediation) {
	for _, acts := range w.stats.acts {
		for i := range acts {
			if acts[i].node == crNodeName(rem) && acts[i].evidence == nil && len(rem.Status.FencingEvidence) > 0 {
				acts[i].evidence = rem.Status.FencingEvidence
			}
		}
	}
}

func (w *World) act(v *Volume, node, what string) {
	if v == nil {
		return
	}
	a := operatorAct{at: w.seconds(), what: what, node: node}
	if w.stats.acts == nil {
		w.stats.acts = map[int][]operatorAct{}
	}
	w.stats.acts[v.Index] = append(w.stats.acts[v.Index], a)
	w.tracef("ctrl", "destructive: %s (%s on %s)", what, v.Name, node)
}

func (w *World) volumeByName(name string) *Volume {
	for _, v := range w.volumes {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// started records where s3gw started, for the "ran again elsewhere" figure.
func (s *episodeStats) started(v *Volume, n *Node) {
	if n != v.Engines[0].Node {
		s.moved = true
	}
}
