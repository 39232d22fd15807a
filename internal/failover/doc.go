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

// Package failover holds the whole failover decision as one pure function.
//
// The controller observes the world (node, s3gw pods, volumes, attachments,
// Longhorn state, fencing evidence) into an Observation, calls Decide,
// performs the Decision's writes and reports Conditions(observation,
// decision). Decide does no I/O and reads no clock, so every rule is
// table-tested: nothing is evicted or released unless the fencing gate holds
// for the node's current failure.
//
// Evidence sources (Sources), release strategies (Strategies) and the rules
// that refuse a volume whatever the evidence (VolumeRules) are descriptors:
// the gate, the outlook and Decide iterate over them, so a new source,
// strategy or volume rule is a new value here (and an adapter in
// internal/fencing or internal/release), not an edit to the rules that use
// them.
//
// Order matters and is a safety property:
//
//	failed again? (start over) → node found → not timed out → node not Ready →
//	targets recorded → volume rules → fencing gate → healthy replica elsewhere → evict →
//	release once the pod is gone → replacement
//
// Each step that does not hold stops the step with a reason.
package failover
