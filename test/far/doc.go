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

// Package far stands in for fence-agents-remediation (FAR) in tests, the
// local cluster, the demo and the benchmarks. It follows FAR's own code
// (medik8s/fence-agents-remediation 51f603e) and runs a real fence agent
// binary, so that the agent's invocation, its retries and time-outs and its
// exit status are the agent's, not ours:
//
//   - Controller.Reconcile is FenceAgentsRemediationReconciler.Reconcile
//     (controllers/fenceagentsremediation_controller.go): the node from
//     GetNodeName, NodeNotFound, NHC's timed-out annotation, the finalizer,
//     FAR's NoSchedule taint, the agent run once per CR, then the
//     remediation strategy and only then Succeeded=True; handleFARDeletion
//     on deletion.
//   - BuildParams is BuildFenceAgentParams with collectAllSecretParams and
//     validateFenceAgentParams (api/v1alpha1/fenceagentsremediation_params.go):
//     shared, node and Secret parameters, {{.NodeName}} templating, Secrets
//     from the CR's own namespace only, the default action reboot.
//   - Executor is pkg/cli/cliexecuter.go: one goroutine per CR UID, retries
//     at a fixed interval, a time-out per attempt, status written by the
//     goroutine; a CR whose agent failed is never tried again.
//   - the conditions are pkg/utils/conditions.go's UpdateConditions, the
//     taints pkg/utils/taints.go's (by key and effect), the pod deletion
//     medik8s/common's resources.DeletePods, which FAR calls.
//   - RBAC is FAR's own (config/rbac/role.yaml): a ClusterRole, and for
//     Secrets a Role in FAR's namespace, lifted to the cluster as OLM lifts
//     an AllNamespaces operator's Role (InstallRBAC); the controller acts as
//     FAR's ServiceAccount, so the API server enforces it.
//
// What FAR does through its admission webhook (refusing specs at create,
// adding the multiple-templates annotation to templates) is not served:
// NewTemplate adds the annotation as the webhook's defaulter would, and a
// spec the webhook would refuse reaches the controller, which leaves it
// Processing as FAR's controller does. The fence agent's effect on the
// machine is the caller's (Controller.Power): in the local cluster the
// harness stops the node's kubelet for "off" and restarts it after a boot
// time for "reboot".
package far
