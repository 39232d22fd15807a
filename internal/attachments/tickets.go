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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// EventLonghornTicketRemoved: the first step of a release detached a volume
// in Longhorn.
const EventLonghornTicketRemoved = "LonghornTicketRemoved"

// DetachInLonghorn removes, for each of the volumes, the
// failed node's csi-attacher tickets from Longhorn's VolumeAttachment, so
// Longhorn detaches the volume and stops its replicas, while the
// Kubernetes VolumeAttachment still holds the replacement off
// (docs/design/replica-stop-confirmation.md). It is the map delete the CSI
// driver's ControllerUnpublishVolume makes (longhorn-manager
// manager/volume.go VolumeManager.Detach), so the driver's own unpublish
// later finds nothing to do.
func DetachInLonghorn(ctx context.Context, w Write, volumes []failover.Volume, done func(Released)) error {
	for _, v := range volumes {
		ids := release.TicketIDs(v)
		logf.FromContext(ctx).Info("Removing the failed node's ticket from Longhorn's VolumeAttachment", "volume", v.LonghornVolume, "tickets", ids)
		removed, err := RemoveCSITickets(ctx, w.Client, w.LonghornNamespace, v.LonghornVolume, w.Node.Name, ids)
		if err != nil {
			return err
		}
		if removed > 0 {
			done(Released{Reason: EventLonghornTicketRemoved, Message: "Removed ticket " + strings.Join(ids, ", ") +
				" from Longhorn's VolumeAttachment " + v.LonghornVolume + "; the release waits for each replica's stop"})
		}
	}
	return nil
}

// RemoveCSITickets removes the named tickets from Longhorn's VolumeAttachment
// of volume, each only while it is a csi-attacher ticket for node, in one
// merge patch locked on the resourceVersion read: a ticket changed since is
// never touched. Longhorn writes the object's status often; a conflict is
// returned, and the next step, woken by that write, reads it again. It
// reports how many it removed; none left to remove is no write.
func RemoveCSITickets(ctx context.Context, c client.Client, namespace, volume, node string, ids []string) (int, error) {
	va := &longhorn.VolumeAttachment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: volume}, va); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("reading Longhorn VolumeAttachment %s: %w", volume, err)
	}
	patch := client.MergeFromWithOptions(va.DeepCopy(), client.MergeFromWithOptimisticLock{})
	removed := 0
	for _, id := range ids {
		t := va.Spec.AttachmentTickets[id]
		if t != nil && t.Type == longhorn.TicketTypeCSIAttacher && t.NodeID == node {
			delete(va.Spec.AttachmentTickets, id)
			removed++
		}
	}
	if removed == 0 {
		return 0, nil
	}
	if err := c.Patch(ctx, va, patch); err != nil {
		return 0, fmt.Errorf("removing %s from Longhorn VolumeAttachment %s: %w", strings.Join(ids, ", "), volume, err)
	}
	return removed, nil
}
