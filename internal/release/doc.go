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

// Package release owns the Kubernetes objects the three release strategies
// write, so that how a volume leaves a failed node is in one place:
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
// Releasers are the adapters of the strategies' descriptors
// (failover.Strategies). Every write is preconditioned (UID or
// resourceVersion) and idempotent. When a strategy may run, and what it
// writes, is decided in internal/failover; this package only reads and
// writes.
package release
