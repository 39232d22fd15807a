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

// Package harness runs the whole failover story on the local cluster, for
// the e2e suite (test/e2e), the demo (hack/demo) and the failover benchmark
// (hack/bench).
//
// Start boots a cluster (package test/cluster) and the simulated Longhorn
// (package test/longhornsim), installs the operator's CRDs with the
// NodeHealthCheck and FenceAgentsRemediation fixtures and NodeHealthCheck's
// RBAC, and runs in this process:
//
//   - the operator: a controller-runtime manager with the same reconcilers,
//     scheme and clocks as cmd/manager (Options.Operator);
//   - the cluster side (unless Options.ExternalNHC): NodeHealthCheck
//     emulators (test/nhc), one per EnableRemediation, each selecting its
//     nodes by label like a NodeHealthCheck's spec.selector and acting as
//     NHC's service account (impersonated, bound to the aggregated
//     ext-remediation ClusterRoles, ours and FAR's); and the
//     fence-agents-remediation stand-in (test/far), acting as FAR's service
//     account with FAR's RBAC, which reconciles every FenceAgentsRemediation
//     and runs Debian's fence_dummy for it. CreateFARTemplate makes a FAR
//     template and its Secret, for a delegate or an escalation step; the
//     agent's "off" stops the node's kubelet, "reboot" restarts it after
//     Options.FARBootTime.
//
// With Options.NHC off, nothing creates S3GWRemediations: a real
// NodeHealthCheck operator can run against Env.Cluster.KubeconfigPath
// instead (docs/local-cluster.md says what to apply).
//
// StartOperatorProcess runs the manager instead as the Deployment does: a
// process built from cmd/manager, authenticated as its ServiceAccount with
// the generated RBAC and config/policy's admission policies, with or
// without leader election; ManagerWrites reads what it wrote from the API
// server's audit log (ManagerAuditPolicy), and the cluster can kill and
// restart kube-apiserver and etcd (cluster.Cluster.RestartComponents).
//
// DeployGateway creates an s3gw gateway as the s3gw chart does (labels,
// one replica, Recreate, an RWO Longhorn claim) on chosen nodes; Fail stops
// a node's kubelet and returns a Run, whose Timeline records, from watches,
// when each step of the failover was first seen: node lost, NotReady, CR
// created, fenced, old pod gone, attachment released, replacement
// scheduled, attached and Ready.
package harness
