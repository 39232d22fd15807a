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

package failover

import "time"

// State is what a step of the remediation knows: the world as this step
// observed it, and what the controller recalls of the failure from its
// memory, brought up to date with this observation (step.Recall). Every
// rule of the decision reads a State; none reads a clock or the API.
type State struct {
	Observation
	Recall
}

// Recall is the remediation's memory as the rules read it, on the
// controller's clock. The node's heartbeat sighting is in
// Node.Heartbeat.Seen and each target's record in Target.Recorded.
type Recall struct {
	// Episode is the not-Ready period the memory records this remediation
	// working on; nil before the first one.
	Episode *Episode
	// Sightings are what this controller saw of each piece of timed
	// evidence, this step included.
	Sightings []EvidenceSighting
	// FencedSince is when the controller found the gate open for this
	// failure, which starts the release deadline; nil while it is closed.
	FencedSince *time.Time
	// ReleasedSince is when the targets were found both evicted and
	// released, which starts the replacement timeout; nil before.
	ReleasedSince *time.Time
	// Succeeded is true once Succeeded=True was reported for this failure:
	// a finished move stays finished within its failure.
	Succeeded bool
	// SuccessReported is true while Succeeded=True is reported, for this
	// failure or an earlier one under the same CR (healthyDelay): NHC reads
	// only that, and it is never taken back to Unknown.
	SuccessReported bool
}

// TaintSighting names the out-of-service taint among the sightings.
const TaintSighting = "node.kubernetes.io/out-of-service"

// EvidenceSighting is what this controller saw of one piece of timed
// evidence, on its own clock.
type EvidenceSighting struct {
	// Name is Kind/name of a fencer's CR, or TaintSighting.
	Name string
	// PendingAt is when it last saw it prove nothing yet: the CR without
	// its condition True, the node without the taint.
	PendingAt *time.Time
	// ProvenAt is when it first saw it prove the node fenced.
	ProvenAt *time.Time
	// FailedAt is when it first saw a fencer's CR report that it gave up
	// (RemediatorCR.Failure).
	FailedAt *time.Time
}

// CRSighting names a fencer's CR among the sightings.
func CRSighting(cr RemediatorCR) string { return cr.Kind + "/" + cr.Name }

// Sighting returns what this controller saw of the named evidence.
func (s State) Sighting(name string) EvidenceSighting {
	for _, seen := range s.Sightings {
		if seen.Name == name {
			return seen
		}
	}
	return EvidenceSighting{Name: name}
}

// Block is what blocks a step, in place of the fact its condition would
// report: a Ready node or a closed gate (Fenced), a live kubelet
// (AttachmentsReleased), finalizers (WorkloadEvicted).
type Block struct {
	Condition, Reason, Message string
}
