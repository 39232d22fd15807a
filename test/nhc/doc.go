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

// Package nhc emulates NodeHealthCheck (NHC) for tests, the local cluster
// and the demo, following NHC's own code (node-healthcheck-operator
// dd44432: internal/controller/nodehealthcheck_controller.go, shared.go,
// resources/manager.go, templates.go, lease.go, status.go, watch.go,
// utils/mapper.go, its webhook) and the contract's section 8:
//
//   - the pass in NHC's order: its templates first (one missing or without
//     spec.template sets Disabled and returns before anything is deleted,
//     looking again every 15 s while one is missing), then pause, orphans,
//     healthy nodes, minHealthy and storm recovery, unhealthy nodes;
//   - CRs built as NHC builds them: the template's namespace, name or
//     generateName (multiple-templates support), node-name and
//     template-name annotations, the part-of and control-plane labels, a
//     non-controller owner reference to a NodeHealthCheck, a plain Create;
//   - NHC's lookup of "its" CR: every CR of the kind in the cluster that
//     matches node and template (by name when it has no template-name), so a
//     CR it did not create makes it create nothing;
//   - classic mode and escalation: ordered steps with timeouts, the next
//     step about a second after Succeeded=False or the timeout,
//     nhc-timed-out stamped with a metadata Update unless Succeeded=True,
//     and NHC's status bookkeeping, quirks included (one remediation per
//     kind);
//   - the node lease medik8s-leases/node-<node>: owned by the Node, held by
//     NodeHealthCheck-<name> for the current timeout plus a minute, taken
//     over once expired, renewed while remediating, and once overdue
//     (acquireTime + 3 × the timeout, plus earlier steps') invalidated and
//     the CR timed out — in classic mode the only time-out, which
//     Emulator.Timeout shortens for tests;
//   - the selector, minHealthy and storm recovery (which skip remediation
//     altogether: no creation, no time-out, no lease renewal), one
//     control-plane node at a time, the exclude label, pauseRequests,
//     healthyDelay with its manually-confirmed-healthy override, and the CRs
//     of nodes deleted or no longer selected (orphans);
//   - what wakes it: node events through NHC's predicate (NodePredicate),
//     and update and delete events of its templates and CRs (WatchedKinds,
//     WokenBy), besides its own requeues.
//
// It never writes status and never removes finalizers. Emulator.Reconcile
// is one pass of NHC's reconcile; Remediate, TimeOut, NodeHealthy and
// NodeDeleted are its parts for step-by-step tests; Controller runs the
// passes against a cluster; ValidateEscalation is NHC's admission rule.
package nhc
