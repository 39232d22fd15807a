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

package longhorn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNotInstalled means Longhorn's CRDs are not served by the API server.
var ErrNotInstalled = errors.New("longhorn.io/v1beta2 is not served: Longhorn is not installed")

// State reads Longhorn's view of nodes, replicas and tickets, through the
// reader it is given: the manager's cache, whose informers start on the
// first read, so none is started on clusters without Longhorn.
// +kubebuilder:object:generate=false
type State struct {
	Reader    client.Reader
	Namespace string
}

func (s State) get(ctx context.Context, name string, obj client.Object) (bool, error) {
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, obj)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, ErrNotInstalled
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("getting Longhorn %T %s/%s: %w", obj, s.Namespace, name, err)
	}
}

// Available reports whether every Longhorn CRD the controller reads is
// served; Longhorn before v1.5 has no VolumeAttachment CRD.
func (s State) Available(ctx context.Context) (bool, error) {
	for _, obj := range []client.Object{&Node{}, &Volume{}, &VolumeAttachment{}} {
		_, err := s.get(ctx, "-", obj)
		if errors.Is(err, ErrNotInstalled) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	list := &ReplicaList{}
	if err := s.Reader.List(ctx, list, client.InNamespace(s.Namespace), client.Limit(1)); err != nil {
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, fmt.Errorf("listing Longhorn replicas: %w", err)
	}
	return true, nil
}

// NodeReadiness is a Longhorn Node's Ready condition, as read; whether it
// is down or reaches its replicas is failover's rule (failover.LonghornNode).
// +kubebuilder:object:generate=false
type NodeReadiness struct {
	// Found is false when Longhorn has no Node of that name.
	Found          bool
	Status, Reason string
}

// NodeReadiness reads the Longhorn Node's Ready condition.
func (s State) NodeReadiness(ctx context.Context, node string) (NodeReadiness, error) {
	lhNode := &Node{}
	found, err := s.get(ctx, node, lhNode)
	if err != nil || !found {
		return NodeReadiness{}, err
	}
	r := NodeReadiness{Found: true, Status: "Unknown"}
	for _, c := range lhNode.Status.Conditions {
		if c.Type == NodeConditionReady {
			r.Status, r.Reason = c.Status, c.Reason
		}
	}
	return r, nil
}

// VolumeView is what the controller needs of one Longhorn volume.
// +kubebuilder:object:generate=false
type VolumeView struct {
	// Exists is false when no Longhorn Volume of that name exists.
	Exists bool
	// TicketsOnNode are the tickets, of any type, the volume's Longhorn
	// VolumeAttachment holds for the node.
	TicketsOnNode []AttachmentTicket
	// Replicas are the volume's replicas.
	Replicas []ReplicaView
	// RevisionCounterDisabled is true when the Volume or one of its
	// replicas has spec.revisionCounterDisabled. Longhorn copies the
	// Volume's setting into the engine and replicas it creates, so a
	// Volume edited afterwards still has engines that compare nothing.
	RevisionCounterDisabled bool
}

// ReplicaView is one replica of a volume.
// +kubebuilder:object:generate=false
type ReplicaView struct {
	Name, Node string
	// Healthy is true when the replica is not failed and has been healthy.
	Healthy bool
}

// Volume reads a volume's existence, its tickets for node and its replicas.
// Tickets are only read, never edited: the CSI driver removes its ticket
// when the Kubernetes VolumeAttachment goes.
func (s State) Volume(ctx context.Context, volume, node string) (VolumeView, error) {
	var v VolumeView
	vol := &Volume{}
	exists, err := s.get(ctx, volume, vol)
	if err != nil || !exists {
		return v, err
	}
	v.Exists, v.RevisionCounterDisabled = true, vol.Spec.RevisionCounterDisabled
	va := &VolumeAttachment{}
	found, err := s.get(ctx, volume, va)
	if err != nil {
		return v, err
	}
	for _, t := range va.Spec.AttachmentTickets {
		if found && t != nil && t.NodeID == node {
			v.TicketsOnNode = append(v.TicketsOnNode, *t)
		}
	}
	slices.SortFunc(v.TicketsOnNode, func(a, b AttachmentTicket) int { return strings.Compare(a.ID, b.ID) })
	list := &ReplicaList{}
	err = s.Reader.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingLabels{VolumeLabel: volume})
	if meta.IsNoMatchError(err) {
		return v, ErrNotInstalled
	}
	if err != nil {
		return v, fmt.Errorf("listing Longhorn replicas of %s: %w", volume, err)
	}
	for _, r := range list.Items {
		if r.Spec.VolumeName != "" && r.Spec.VolumeName != volume {
			continue
		}
		v.Replicas = append(v.Replicas, ReplicaView{Name: r.Name, Node: r.Spec.NodeID,
			Healthy: r.Spec.FailedAt == "" && r.Spec.HealthyAt != ""})
		v.RevisionCounterDisabled = v.RevisionCounterDisabled || r.Spec.RevisionCounterDisabled
	}
	// By name: a cache lists in no fixed order, and the order reaches
	// status messages, which would change, and be written, on every pass.
	slices.SortFunc(v.Replicas, func(a, b ReplicaView) int { return strings.Compare(a.Name, b.Name) })
	return v, nil
}
