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

package attachments

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// Event reasons of the releases, on the remediation and on the node.
const (
	EventVolumeInUseCleared      = "VolumeInUseCleared"
	EventVolumeAttachmentDeleted = "VolumeAttachmentDeleted"
	EventOutOfServiceTaintAdded  = "OutOfServiceTaintAdded"
)

// Write is what a release writes with: the client, the failed node as the
// pass read it (node writes are locked on its resourceVersion) and the
// remediation that owns what is written.
type Write struct {
	Client client.Client
	Node   *corev1.Node
	Owner  types.UID
	// Remediation names the owner, namespace/name, for events.
	Remediation string
	Now         metav1.Time
	// LonghornNamespace holds Longhorn's VolumeAttachments.
	LonghornNamespace string
}

// Released is one write a release made: how many volumes it released, and
// its event.
type Released struct {
	Volumes         int
	Reason, Message string
}

// Adapter is the I/O of one release strategy (release.Strategy): the writes
// of its actions, and what is cleaned up after them when NodeHealthCheck
// deletes the remediation. Each write logs before it is made, is
// idempotent, and is told to done once made. A nil func does nothing.
type Adapter struct {
	// Release makes the strategy's write for the action's volumes, or for
	// the node.
	Release func(ctx context.Context, w Write, a failover.Action, done func(Released)) error
	// Perform makes an action the strategy's Tidy asks for.
	Perform func(ctx context.Context, w Write, a failover.Action, done func(Released)) error
	// CleanUp removes what the strategy's writes left for the remediation.
	CleanUp func(ctx context.Context, w Write, done func(Released)) error
}

// The writes of the release strategies and their first step:
// ControllerDetach patches a dead kubelet's node status (volumesInUse);
// OutOfServiceTaint patches the node's taints and its owner annotation;
// DeleteVolumeAttachment deletes a storage.k8s.io VolumeAttachment; every
// release first removes the failed node's csi-attacher ticket from
// Longhorn's VolumeAttachment. config/policy narrows each write to exactly
// that.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=delete
// +kubebuilder:rbac:groups=longhorn.io,resources=volumeattachments,verbs=patch

// Adapters are the adapters of release.Strategies, by strategy.
var Adapters = map[s3gwv1alpha1.ReleaseStrategy]Adapter{
	s3gwv1alpha1.ReleaseControllerDetach:       {Release: unmarkInUse},
	s3gwv1alpha1.ReleaseDeleteVolumeAttachment: {Release: deleteAttachments},
	s3gwv1alpha1.ReleaseOutOfServiceTaint:      {Release: addOutOfServiceTaint, Perform: tidyTaint, CleanUp: cleanUpTaint},
}

// Perform makes an action of the strategy that asked for it: its Release,
// or what its Tidy asks for.
func Perform(ctx context.Context, w Write, a failover.Action, done func(Released)) error {
	adapter := Adapters[a.Strategy]
	do := adapter.Perform
	if a.Kind == failover.Release {
		do = adapter.Release
	}
	if do == nil {
		return fmt.Errorf("release strategy %q has no adapter for %s", a.Strategy, a.Kind)
	}
	return do(ctx, w, a, done)
}

// CleanUp cleans up after every strategy, whichever the spec names: each
// removes only what the node's own record says this remediation wrote.
func CleanUp(ctx context.Context, w Write, done func(Released)) error {
	for _, strategy := range release.Strategies {
		if cleanUp := Adapters[strategy.Name].CleanUp; cleanUp != nil {
			if err := cleanUp(ctx, w, done); err != nil {
				return err
			}
		}
	}
	return nil
}

// unmarkInUse drops the volumes from a dead kubelet's volumesInUse in one
// write (ControllerDetach).
func unmarkInUse(ctx context.Context, w Write, a failover.Action, done func(Released)) error {
	handles := make([]string, 0, len(a.Volumes))
	for _, v := range a.Volumes {
		handles = append(handles, v.LonghornVolume)
	}
	logf.FromContext(ctx).Info("Removing volumes from the dead kubelet's volumesInUse", "volumes", handles)
	removed, err := UnmarkInUse(ctx, w.Client, w.Node, handles)
	if err != nil || removed == 0 {
		return err
	}
	done(Released{Volumes: removed, Reason: EventVolumeInUseCleared, Message: "Cleared " + strings.Join(handles, ", ") +
		" from status.volumesInUse so the attach-detach controller detaches it"})
	return nil
}

// deleteAttachments deletes each volume's VolumeAttachment on the node, as
// the step observed it (DeleteVolumeAttachment).
func deleteAttachments(ctx context.Context, w Write, a failover.Action, done func(Released)) error {
	for _, v := range a.Volumes {
		logf.FromContext(ctx).Info("Deleting VolumeAttachment", "volume", v.LonghornVolume)
		deleted := 0
		for _, va := range v.Attachments {
			if va.Deleting {
				continue // asked already; its finalizers hold it (the deadline names them)
			}
			ok, err := DeleteVolumeAttachment(ctx, w.Client, va.Name, va.UID)
			if err != nil {
				return err
			}
			if ok {
				deleted++
			}
		}
		if deleted > 0 {
			done(Released{Volumes: deleted, Reason: EventVolumeAttachmentDeleted,
				Message: "Deleted the VolumeAttachment of " + v.LonghornVolume + " on the failed node"})
		}
	}
	return nil
}

// addOutOfServiceTaint adds the taint with its owner annotation, unless one
// is there already (OutOfServiceTaint); it releases every volume planned.
func addOutOfServiceTaint(ctx context.Context, w Write, a failover.Action, done func(Released)) error {
	taint := OutOfServiceTaint()
	logf.FromContext(ctx).Info("Adding out-of-service taint", "taint", taint.ToString())
	added, err := AddOwnedTaint(ctx, w.Client, w.Node, taint, w.Owner, w.Now.Rfc3339Copy())
	if err != nil || !added {
		return err
	}
	done(Released{Volumes: len(a.Volumes), Reason: EventOutOfServiceTaintAdded,
		Message: "Added " + taint.ToString() + " to release s3gw's volumes"})
	return nil
}
