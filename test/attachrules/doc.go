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

// Package attachrules is the one description of how Kubernetes and
// Longhorn attach and detach a CSI volume that every double of those
// components in this repository must reproduce. Each rule is a pure
// function with a table test; the doubles call it wherever they play the
// component, so a rule changes here, once.
//
// Two simulators use it:
//
//   - controllers/world_test.go, the envtest stories' synchronous doubles:
//     the attach-detach controller (ADCDetaches, MultiAttach), the CSI
//     external-attacher with Longhorn's ControllerPublish/UnpublishVolume
//     (AttachmentName, PublishRefusal, PublishTicket, TicketAttachment) and
//     the kubelet. Those doubles attach and start the replacement in one
//     step and keep no volumesAttached, so MountAllowed is longhornsim's
//     alone;
//   - test/longhornsim, the local cluster's in-process controllers: the
//     csi-attacher sidecar with the Longhorn CSI plugin (the same CSI rules)
//     and the kubelet's volume manager (MountAllowed). There the
//     attach-detach controller is the real kube-controller-manager, so the
//     local-cluster e2e suites hold the ADC rules below against the real
//     thing.
//
// test/worldmodel does not use this package, on purpose: it is an
// independent model of the same components written from the reference, so
// that a wrong rule shared by the controller's tests and its doubles cannot
// hide a safety hole there too.
//
// # The rules
//
// The facts are in /work/shared/reference/longhorn-and-node-failure.md
// (§1.1 tickets, §1.3 the CSI driver, §2.1 VolumeAttachments, §2.2 the ADC)
// and attach-detach-routes-measured.md.
//
//   - Naming. The storage.k8s.io VolumeAttachment of a CSI volume on a node
//     is "csi-" + hex(sha256(volumeHandle + driver + node)), and Longhorn's
//     CSI plugin uses the same string as the ID of its attachment ticket
//     (AttachmentName). Kubelet and the ADC name the volume
//     "kubernetes.io/csi/<driver>^<volumeHandle>" in node.status.volumesInUse
//     and volumesAttached (internal/longhorn.UniqueVolumeName).
//   - The ADC detaches a volume from a node once no pod bound to that node
//     in the API uses it, and either the node's kubelet no longer lists it
//     in status.volumesInUse (a normal, verified-safe detach) or the node
//     carries the node.kubernetes.io/out-of-service taint, whatever its
//     effect (a force detach) (ADCDetaches).
//   - The ADC also force-detaches a volume still listed in volumesInUse
//     from a node that is not Ready once 6 minutes
//     (ReconcilerMaxWaitForUnmountDuration) have passed since it first
//     wanted to detach it, unless --disable-force-detach-on-timeout is set.
//     The doubles leave this out: the envtest stories run on a fake clock
//     that they advance by minutes for NHC and replacement time-outs, and a
//     double that force-detached would let a story pass by waiting instead
//     of by the operator's release, which exists to beat that timer. The
//     local cluster runs the real ADC, timer included (unless
//     cluster.Options.DisableForceDetachOnTimeout); its e2e runs end well
//     before it fires.
//   - The ADC does not attach a volume that does not allow multi-attach (a
//     PersistentVolume with access modes and none of them ReadWriteMany or
//     ReadOnlyMany) while it is attached to another node: Multi-Attach
//     (MultiAttachAllowed, MultiAttach). The envtest double counts a
//     VolumeAttachment as attached until it is gone; the real ADC, when one
//     is deleted behind its back, notices only at its 1-minute
//     VerifyVolumesAreAttached sync (19.5 s measured). Stories count passes,
//     not seconds, so the double leaves that delay out too.
//   - ControllerPublishVolume writes a ticket of type csi-attacher, with the
//     VolumeAttachment's name as its ID, for the VolumeAttachment's node
//     (PublishTicket). Longhorn's attach API refuses a target whose Longhorn
//     Node is not Ready=True; while the volume is attached or attaching to
//     another node, publishing waits (PublishRefusal, LonghornNodeReady).
//   - The CSI attacher owns only csi-attacher tickets, and
//     ControllerUnpublishVolume removes exactly the ticket named by its
//     VolumeAttachment; tickets of other requesters (Longhorn's UI,
//     backups, ...) and of other nodes stay (TicketAttachment). It waits
//     only until the ticket is gone, not until the volume has detached.
//   - Kubelet mounts a controller-attached volume only once it reports the
//     volume in node.status.volumesInUse (so the ADC will not detach it
//     underneath), the ADC lists it in node.status.volumesAttached, and its
//     VolumeAttachment is attached and not being deleted (MountAllowed).
package attachrules
