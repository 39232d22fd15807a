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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNotInstalled means Longhorn's CRDs are not served by the API server.
var ErrNotInstalled = errors.New("longhorn.io/v1beta2 is not served: Longhorn is not installed")

// State reads Longhorn's view of nodes, replicas and tickets. It reads
// through an uncached reader, so decisions see Longhorn as it is now and no
// informer is started on clusters without Longhorn.
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

// VolumeExists reports whether the Longhorn Volume exists.
func (s State) VolumeExists(ctx context.Context, volume string) (bool, error) {
	return s.get(ctx, volume, &Volume{})
}

// NodeDown reports whether Longhorn considers the node down: its Node is
// Ready=False because Kubernetes reports it NotReady or gone. Only then does
// Longhorn finish a detach without contacting the node.
func (s State) NodeDown(ctx context.Context, node string) (bool, error) {
	lhNode := &Node{}
	found, err := s.get(ctx, node, lhNode)
	if err != nil || !found {
		return false, err
	}
	for _, c := range lhNode.Status.Conditions {
		if c.Type == NodeConditionReady {
			return c.Status == "False" &&
				(c.Reason == NodeReasonKubernetesNodeNotReady || c.Reason == NodeReasonKubernetesNodeGone), nil
		}
	}
	return false, nil
}

// ReplicaPlacement says where a volume's replicas are.
// +kubebuilder:object:generate=false
type ReplicaPlacement struct {
	// OnNode is true when any replica, healthy or not, lives on the node.
	OnNode bool
	// HealthyElsewhere is true when a replica on another node is not
	// failed and has been healthy.
	HealthyElsewhere bool
}

// Replicas reports the replica placement of a volume relative to node.
func (s State) Replicas(ctx context.Context, volume, node string) (ReplicaPlacement, error) {
	list := &ReplicaList{}
	err := s.Reader.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingLabels{VolumeLabel: volume})
	if meta.IsNoMatchError(err) {
		return ReplicaPlacement{}, ErrNotInstalled
	}
	if err != nil {
		return ReplicaPlacement{}, fmt.Errorf("listing Longhorn replicas of %s: %w", volume, err)
	}
	var p ReplicaPlacement
	for _, r := range list.Items {
		if r.Spec.VolumeName != "" && r.Spec.VolumeName != volume {
			continue
		}
		switch {
		case r.Spec.NodeID == node:
			p.OnNode = true
		case p.HealthyElsewhere || r.Spec.FailedAt != "" || r.Spec.HealthyAt == "":
		default:
			// A healthy replica only helps on a node Longhorn can use.
			ready, err := s.NodeReady(ctx, r.Spec.NodeID)
			if err != nil {
				return p, err
			}
			p.HealthyElsewhere = ready
		}
	}
	return p, nil
}

// NodeReady reports whether Longhorn's Node is Ready=True.
func (s State) NodeReady(ctx context.Context, node string) (bool, error) {
	lhNode := &Node{}
	found, err := s.get(ctx, node, lhNode)
	if err != nil || !found {
		return false, err
	}
	for _, c := range lhNode.Status.Conditions {
		if c.Type == NodeConditionReady {
			return c.Status == "True", nil
		}
	}
	return false, nil
}

// TicketOnNode reports whether the volume's Longhorn VolumeAttachment holds
// any ticket for node. Tickets are only read, never edited: the CSI driver
// removes its ticket when the Kubernetes VolumeAttachment goes.
func (s State) TicketOnNode(ctx context.Context, volume, node string) (bool, error) {
	va := &VolumeAttachment{}
	found, err := s.get(ctx, volume, va)
	if err != nil || !found {
		return false, err
	}
	for _, t := range va.Spec.AttachmentTickets {
		if t != nil && t.NodeID == node {
			return true, nil
		}
	}
	return false, nil
}
