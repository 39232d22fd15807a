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
//     on another node). An attached VolumeAttachment is never published
//     again, so its ticket can be removed first (by the operator) while it
//     keeps holding the volume. Unpublish removes that one ticket, a no-op
//     when it is gone, without waiting for the detach, as Longhorn does.
//   - volumeReconciler plays the volume attachment, volume, engine and
//     replica controllers (stepAttachment has the rules): a ticket attaches
//     a fully detached volume after Options.AttachDelay; a volume whose node
//     no ticket wants stops its engine, then its replicas, and is detached
//     once all are recorded stopped. A process is recorded stopped at once
//     if its node's instance manager answers (the node's kubelet runs) or
//     Longhorn sees the node down; on a node lost but not yet seen down it
//     keeps its stale state and the volume hangs in "detaching". Robustness
//     and the engine turn unknown while the engine's node is down; a
//     replica on a down node is unknown while it should run and stopped
//     once it should not. A node's health change wakes only the volumes
//     with their engine, a replica or a ticket there.
//   - instanceManagerReconciler plays the instance manager controller and
//     its monitor: one InstanceManager per node (instance-manager-<hash>,
//     label longhorn.io/node, spec.nodeID), created once the node is up.
//     While the node's instance manager answers it is running and
//     status.instanceReplicas lists exactly the node's running replicas;
//     while the node is lost but not yet seen down nothing writes it, so it
//     stays stale; once Longhorn sees the node down it is unknown with its
//     list kept; when the node is back it is running with a fresh list. It
//     is written only when that changes.
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
// Each simulated controller handles five objects at once, as each of
// longhorn-manager's controllers does on every node
// (controller/controller_manager.go, Workers).
//
// # Not simulated
//
// Data and I/O, engines talking to replicas, replica rebuilding, failing
// replicas (an attach does not set failedAt on a replica it cannot launch
// on a down node; it stays unknown), degraded or
// faulted volumes, migration, RWX share managers, instance manager pods
// (an InstanceManager is never starting, stopped or error, has no
// conditions and lists no engines), Longhorn's webhooks
// (ticket generations, finalizers on its VolumeAttachment) and settings
// other than node-down-pod-deletion-policy. A detached volume reports
// robustness healthy.
package longhornsim
