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

// Package step is the remediation's state machine. Step takes what one step
// observed of the world and what the remediation remembers, and returns
// what to do (a Decision: the phase, the writes in order, what to wait for)
// and what to remember. It does no I/O and reads no clock: same observation,
// same memory, same decision. The controller persists the memory, performs
// the actions and reports the conditions Conditions derives, which are
// output only.
//
// The rules, in order, stop at the first that is not met:
//
//	failed again? (start over) → node found → not timed out → node not Ready →
//	targets recorded → shared targets → volume rules → fencing gate →
//	healthy replica elsewhere → evict → release once the pod is gone →
//	replacement
//
// Evidence sources (package evidence) and release strategies (package
// release) are descriptors: the rules iterate over them and name none.
package step

import (
	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
)

// Memory is the remediation's memory, as status keeps it.
type Memory = s3gwv1alpha1.RemediationMemory

// Step is one transition of the remediation: what it knows once it recalls
// its memory against the observation (Recall), what it decides (Decide),
// and what it remembers after (Remember). The decision carries the State
// it was decided on, from which the controller derives its outputs.
func Step(o failover.Observation, m Memory) (Decision, Memory) {
	s := Recall(o, m)
	d := Decide(s)
	return d, Remember(m, s, d)
}

// Recall is what a step knows: the observation, with the memory brought up
// to date by it. The node's heartbeat sighting advances on the
// controller's clock (HeartbeatSighting.Next), each piece of evidence is
// sighted (evidence.NextSightings), and each target is marked recorded if
// the memory holds it. The observation itself is left unchanged.
func Recall(o failover.Observation, m Memory) failover.State {
	s := failover.State{Observation: o, Recall: failover.Recall{
		Episode:         episodeOf(m.Episode),
		Sightings:       sightingsOf(m.EvidenceSightings),
		FencedSince:     timeOf(m.FencedAt),
		ReleasedSince:   timeOf(m.ReleasedAt),
		Succeeded:       m.SucceededAt != nil,
		SuccessReported: m.SuccessReported,
	}}
	if len(o.Targets) > 0 {
		recorded := map[string]bool{}
		for _, t := range m.Targets {
			recorded[t.Key()] = true
		}
		s.Targets = make([]failover.Target, len(o.Targets))
		for i, t := range o.Targets {
			t.Recorded = recorded[t.Key()]
			s.Targets[i] = t
		}
	}
	if o.Node == nil {
		return s
	}
	node := *o.Node
	node.Heartbeat.Seen = heartbeatSightingOf(m.Heartbeat).Next(node.Heartbeat, o.Now)
	s.Node = &node
	if sightsEvidence(s) {
		s.Sightings = evidence.NextSightings(s.Sightings, s)
	}
	return s
}

// sightsEvidence is true for a step that read the evidence sources: one on
// an existing node that NHC has not timed out and that is not excluded.
func sightsEvidence(s failover.State) bool {
	return s.Node != nil && !s.TimedOut && !s.Node.Excluded
}
