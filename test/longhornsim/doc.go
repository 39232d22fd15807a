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

// Package longhornsim simulates Longhorn's CSI stack and the volume half of
// the kubelet, as in-process controllers against a cluster from package
// cluster (or any API server with kwok-style nodes).
//
// # What is simulated
//
// Each controller plays one real component and is the only writer of the
// fields that component owns; writes are merge patches of those fields, and
// writes to objects other loops also touch use an optimistic lock. Where a
// controller plays a component the envtest stories' doubles
// (controllers/world_test.go) play too, both follow the rules in package
// attachrules: VolumeAttachment and ticket names, when the CSI plugin
// refuses a publish, which tickets the attacher owns and unpublishes, and
// when the kubelet mounts.
//
//   - nodeReconciler plays longhorn-manager's node controller: one Longhorn
//     Node per Kubernetes node, Ready=False with KubernetesNodeNotReady when
//     the Kubernetes Node is not Ready (a lost heartbeat at once, a kubelet's
//     False after 15 s) and KubernetesNodeGone when it is deleted.
//   - attacherReconciler plays the csi-attacher sidecar with the CSI
//     plugin's ControllerPublish/UnpublishVolume: the
//     external-attacher/driver-longhorn-io finalizer, the csi-attacher ticket
//     (attachrules.PublishTicket: ID = VolumeAttachment name) in the
//     Longhorn VolumeAttachment, and VolumeAttachment status. It refuses,
//     with attachError and a 2 s retry, while attachrules.PublishRefusal
//     says so (the target Longhorn Node is not Ready, or the volume is still
//     on another node). Unpublish removes that one ticket without waiting
//     for the detach, as Longhorn does.
//   - volumeReconciler plays the volume attachment, volume, engine and
//     replica controllers (stepAttachment has the rules): a ticket attaches
//     a fully detached volume after Options.AttachDelay; a volume whose node
//     no ticket wants detaches at once if its instance manager answers (the
//     node's kubelet runs) or Longhorn sees the node down, and otherwise
//     hangs in "detaching" until it does. Robustness and the engine turn
//     unknown while the engine's node is down, replicas on down nodes too.
//   - kubeletReconciler plays the kubelet's volume manager on live nodes:
//     node.status.volumesInUse lists the volumes of the node's pods; a pod's
//     volumes are mounted (cluster.VolumesMountedAnnotation, which lets kwok
//     start it) once attachrules.MountAllowed holds: they are reported in
//     use, listed in volumesAttached by the attach-detach controller and
//     their VolumeAttachment is attached; a deleted pod's volumes are
//     unmounted before kwok removes it. On a failed node nothing changes any
//     more.
//   - podDeletionPolicyReconciler (only with PolicyDeleteDeploymentPod)
//     plays Longhorn's node-down-pod-deletion-policy for Deployment pods.
//
// # What is real
//
// Everything Kubernetes decides: the attach-detach controller creates and
// deletes VolumeAttachments, reports volumesAttached, refuses to attach an
// RWO volume attached elsewhere and waits for unmount before detaching (the
// rules attachrules.ADCDetaches and attachrules.MultiAttach state for the
// envtest doubles, which these e2e runs hold against the real thing); the
// PV controller binds claims; the node-lifecycle and taint-eviction
// controllers declare nodes lost and evict pods.
//
// # Not simulated
//
// Data and I/O, engines talking to replicas, replica rebuilding, degraded or
// faulted volumes, migration, RWX share managers, Longhorn's webhooks
// (ticket generations, finalizers on its VolumeAttachment) and settings
// other than node-down-pod-deletion-policy. A detached volume reports
// robustness healthy.
package longhornsim
