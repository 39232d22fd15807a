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

package attachrules

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// PublishTicket is the ticket Longhorn's ControllerPublishVolume writes
// into the volume's Longhorn VolumeAttachment for the storage.k8s.io
// VolumeAttachment named attachment on node: type csi-attacher, with the
// VolumeAttachment's name as its ID and the parameters a running s3gw
// volume shows.
func PublishTicket(attachment, node string) *longhorn.AttachmentTicket {
	return &longhorn.AttachmentTicket{
		ID: attachment, Type: longhorn.TicketTypeCSIAttacher, NodeID: node,
		Parameters: map[string]string{"disableFrontend": "false", "lastAttachedBy": ""},
	}
}

// TicketAttachment names the storage.k8s.io VolumeAttachment a Longhorn
// ticket belongs to. The CSI attacher owns only csi-attacher tickets, each
// named after its VolumeAttachment, and ControllerUnpublishVolume of that
// VolumeAttachment removes exactly that ticket. ok is false for the tickets
// of other requesters (Longhorn's UI, backups, ...), which it never
// touches.
func TicketAttachment(t *longhorn.AttachmentTicket) (attachment string, ok bool) {
	if t == nil || t.Type != longhorn.TicketTypeCSIAttacher {
		return "", false
	}
	return t.ID, true
}

// LonghornNodeReady reports whether the Longhorn Node (nil when missing) is
// Ready=True, the only state in which Longhorn attaches a volume there.
func LonghornNodeReady(n *longhorn.Node) bool {
	if n == nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == longhorn.NodeConditionReady {
			return c.Status == string(corev1.ConditionTrue)
		}
	}
	return false
}

// PublishRefusal says why Longhorn's ControllerPublishVolume cannot, for
// now, attach the volume to node, or returns "" when nothing stands in the
// way. target is node's Longhorn Node (nil when missing). volume is the
// Longhorn Volume once the ticket is written, nil before: writing the
// ticket is refused only for a target that is not Ready, while satisfying
// it also waits for the volume to leave any other node.
func PublishRefusal(target *longhorn.Node, volume *longhorn.Volume, node string) string {
	if volume != nil {
		if other := attachedElsewhere(volume, node); other != "" {
			return fmt.Sprintf("volume %s is attached to different node %s, waiting for it to detach", volume.Name, other)
		}
	}
	if !LonghornNodeReady(target) {
		return fmt.Sprintf("node %s is not ready, couldn't attach volume", node)
	}
	return ""
}

// attachedElsewhere names the node the volume is attached or attaching to,
// if that is not node.
func attachedElsewhere(v *longhorn.Volume, node string) string {
	for _, n := range []string{v.Status.CurrentNodeID, v.Spec.NodeID} {
		if n != "" && n != node {
			return n
		}
	}
	return ""
}
