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

// Package failover is the failover core's vocabulary: what a pass
// observed of the world (Observation: the node, its heartbeat and taint,
// the s3gw pods and their volumes, replicas and attachments, the evidence),
// what the remediation recalls of it (State, Recall), the actions a
// decision asks for (Action), and the judgments on bare facts the rules
// share (a kubelet's silence, a replica node's reach, the taint's owner).
//
// The decision is built on it in three packages, each importing only the
// ones before it:
//
//	evidence  is the node proven unable to write? (the sources, the gate)
//	release   what may leave the node, and how? (the strategies, the
//	          release in two steps, the volume rules)
//	step      the state machine: Step(observation, memory) → (decision,
//	          memory), its ordered rules, conditions and outlook
//
// Nothing here does I/O or reads a clock: the controller observes
// (controllers/remediation), the adapters write (internal/fencing,
// internal/attachments), and every rule is table-tested on States built by
// package fixture.
package failover
