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

// Package cluster runs a real Kubernetes control plane on loopback with
// simulated nodes, for the demo, the e2e suite and the failover benchmark.
//
// # What is real and what is simulated
//
// Real, unmodified binaries (built from the pinned modules in hack/tools):
// etcd, kube-apiserver, kube-controller-manager with every controller (node
// lifecycle, taint eviction, attach-detach, Pod GC, PV binder, ReplicaSet,
// Deployment, StatefulSet, garbage collector, ...) and kube-scheduler. Every
// decision those make about a failed node is the production code path.
//
// Simulated: the kubelets. kwok plays them for nodes labelled
// ManagedNodeLabel=true, driven by the Stage files embedded from stages/:
// it registers nodes, renews their Leases like a kubelet (every quarter of
// Options.NodeLeaseDuration) and moves pods through Pending, Running/Ready
// and deletion, with no delays. Volumes are the other half of the kubelet
// and live in package longhornsim; the two halves meet at
// VolumesMountedAnnotation (see stages/pod-ready.yaml and pod-delete.yaml).
//
// # Node failure
//
// FailNode removes ManagedNodeLabel: kwok stops renewing the Lease and stops
// touching the node's pods, and longhornsim freezes the node's volume state,
// exactly what a crashed machine leaves behind. The real node-lifecycle
// controller then marks the node Unknown and taints it unreachable after
// Options.NodeMonitorGracePeriod, and the taint-eviction controller evicts
// its pods after the default toleration seconds. RecoverNode puts the label
// back. A network partition is the same picture from the API server; tests
// express the difference through fencing evidence, not through this call.
//
// # Processes
//
// Start allocates free loopback ports, writes a fresh CA, serving
// certificate, service-account key pair, static admin token and admin
// kubeconfig into a temporary directory, and launches each component in
// its own process group with a parent-death signal, waiting for its health
// endpoint before starting the next. A component that exits or stays
// unhealthy fails Start with the tail of its log. Stop (or cancelling the
// context given to Start) sends SIGTERM to every group, SIGKILL after 10 s,
// and removes the directory; logs survive only in Options.LogDir.
//
// # Timings
//
// Every clock that decides failover time is an Options field. The presets
// KubernetesDefaults and Compressed cover the common cases, and Describe
// prints the clocks in force: every printed result must carry it.
package cluster
