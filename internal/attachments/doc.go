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

// Package attachments reads and writes what attaches a volume to a node:
// storage.k8s.io VolumeAttachments, a node's volumesInUse, Longhorn's
// attachment tickets and the out-of-service taint. It holds the adapters
// of the release strategies (release.Strategies), so that how a volume
// leaves a failed node is written in one place:
//
//   - ControllerDetach (default): remove the volume from a dead kubelet's
//     node.status.volumesInUse (UnmarkInUse); the attach-detach controller
//     then detaches it through its own checks.
//   - DeleteVolumeAttachment: delete the storage.k8s.io VolumeAttachment
//     (DeleteVolumeAttachment); the external-attacher unpublishes it,
//     which removes Longhorn's ticket.
//   - OutOfServiceTaint: add node.kubernetes.io/out-of-service with an owner
//     annotation (AddOwnedTaint); the attach-detach controller force-detaches
//     every volume on the node. RemoveOwnedTaint takes away only our own.
//
// Adapters are the adapters of the strategies' descriptors. Every write is
// preconditioned (UID or resourceVersion) and idempotent. When a strategy
// may run, and what it writes, is decided in internal/failover/release;
// this package only reads and writes.
package attachments
