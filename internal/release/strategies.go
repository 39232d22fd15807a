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

package release

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
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
	Now    metav1.Time
	// LonghornNamespace holds Longhorn's VolumeAttachments.
	LonghornNamespace string
}

// Released is one write a release made: how many volumes it released, and
// its event.
type Released struct {
	Volumes         int
	Reason, Message string
}

// Releaser performs a release strategy's writes of one pass, in order, and
// tells done of each one made; it stops at the first error. Each write logs
// before it is made and is idempotent.
type Releaser func(ctx context.Context, w Write, plan failover.ReleasePlan, done func(Released)) error

// Releasers are the adapters of failover.Strategies, by strategy.
var Releasers = map[s3gwv1alpha1.ReleaseStrategy]Releaser{
	s3gwv1alpha1.ReleaseControllerDetach:       unmarkInUse,
	s3gwv1alpha1.ReleaseDeleteVolumeAttachment: deleteAttachments,
	s3gwv1alpha1.ReleaseOutOfServiceTaint:      addOutOfServiceTaint,
}

// unmarkInUse drops the volumes from a dead kubelet's volumesInUse in one
// write (ControllerDetach).
func unmarkInUse(ctx context.Context, w Write, plan failover.ReleasePlan, done func(Released)) error {
	handles := make([]string, 0, len(plan.Volumes))
	for _, v := range plan.Volumes {
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
// the pass observed it (DeleteVolumeAttachment).
func deleteAttachments(ctx context.Context, w Write, plan failover.ReleasePlan, done func(Released)) error {
	for _, v := range plan.Volumes {
		logf.FromContext(ctx).Info("Deleting VolumeAttachment", "volume", v.LonghornVolume)
		deleted := 0
		for _, a := range v.Attachments {
			if a.Deleting {
				continue // asked already; its finalizers hold it (the deadline names them)
			}
			ok, err := DeleteVolumeAttachment(ctx, w.Client, a.Name, a.UID)
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
func addOutOfServiceTaint(ctx context.Context, w Write, plan failover.ReleasePlan, done func(Released)) error {
	taint := OutOfServiceTaint()
	logf.FromContext(ctx).Info("Adding out-of-service taint", "taint", taint.ToString())
	added, err := AddOwnedTaint(ctx, w.Client, w.Node, taint, w.Owner, w.Now.Rfc3339Copy())
	if err != nil || !added {
		return err
	}
	done(Released{Volumes: len(plan.Volumes), Reason: EventOutOfServiceTaintAdded,
		Message: "Added " + taint.ToString() + " to release s3gw's volumes"})
	return nil
}
