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

package step

import (
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
)

// Wait says what a step waits for; the controller maps it to a requeue
// interval, so polling rates are configured in one place.
type Wait int

// Things a step can wait for.
const (
	// WaitNone: nothing to wait for (finished, stopped, or node not found).
	WaitNone Wait = iota
	// WaitForRecord: the memory was just extended with the targets, and must
	// persist before any action on them: the next step runs once it has.
	WaitForRecord
	// WaitForNodeFailure: the node is Ready; NHC will delete the CR.
	WaitForNodeFailure
	// WaitForFencing: the gate is closed.
	WaitForFencing
	// WaitForRelease: attachments are still on the failed node.
	WaitForRelease
	// WaitForReplacement: the replacement is not Ready yet.
	WaitForReplacement
	// WaitAfterFailure: reported Succeeded=False; re-check slowly.
	WaitAfterFailure
	// WaitForStorage: Longhorn or a healthy replica is missing, which may
	// pass; re-check slowly until the release deadline.
	WaitForStorage
)

// Stage is how far the decision got; the conditions a step reports follow
// from it (Conditions).
type Stage int

// The stages of Decide, in order.
const (
	// StageStart: the step ends before the move: a new failure, a reported
	// success kept, no node, NHC's timeout, the selector, the targets.
	StageStart Stage = iota
	// StageNodeReady: the node is Ready.
	StageNodeReady
	// StageSharedTargets: another remediation of the node selects some of
	// the same pods under different rules (sharedTargetsCheck).
	StageSharedTargets
	// StageVolumeRules: a target volume's own settings refuse any release,
	// whatever the evidence (release.VolumeRules).
	StageVolumeRules
	// StageFencing: the gate is closed, or the release strategy lacks the
	// proof of shutdown it needs.
	StageFencing
	// StageStorage: Longhorn or a healthy, reachable replica is missing.
	StageStorage
	// StageRelease: evicting, releasing, or waiting for the replacement.
	StageRelease
	// StageReplacement: released; the replacement is Ready, or late.
	StageReplacement
)

// Next says when the next step of the same Reconcile runs.
type Next int

// When the next step runs.
const (
	// NextOnEvent: the next step runs when a watch event or the requeue
	// wakes the remediation.
	NextOnEvent Next = iota
	// NextNow: the next step waits for nothing but this step's status
	// write, and runs right after it in the same Reconcile, instead of
	// after the watch event of that write.
	NextNow
	// NextNowWritingForThis: the next step runs at once, and writes this
	// step's status with its own. This step force-deleted pods: the next
	// reads them from the API and releases their volumes, and no step waits
	// for the record of the deletes (a step after a crash finds the pods
	// gone all the same).
	NextNowWritingForThis
)

// Decision is what one step does: its writes in order, what it waits for,
// and why it stands where it does.
type Decision struct {
	// State is what the step knew when it decided: the controller derives
	// its outputs (conditions, status, events) from it and the decision.
	State failover.State
	Phase s3gwv1alpha1.Phase
	// Stage is how far the decision got.
	Stage Stage
	// Reason and Message say why the step stands where it does: the
	// reason and message of Processing and Succeeded. Both are empty when
	// a reported success is kept: nothing is reported anew.
	Reason, Message string
	// Blocks are what blocks a step beyond what the targets' facts
	// show.
	Blocks []failover.Block
	Gate   evidence.Gate
	// Actions are the writes, in the order the executor makes them.
	Actions []failover.Action
	// RecordEpisode: the memory records the node failure the remediation
	// works on, so a later failure of the same node is recognised as a new
	// one.
	RecordEpisode *failover.Episode
	// RestartEpisode: the node failed again after a recovery; the step
	// starts over for this failure (the memory forgets the targets,
	// evidence times and outcome of the old one).
	RestartEpisode *failover.Episode
	// RecordTargets: the memory records newly found targets before anything
	// is deleted.
	RecordTargets bool
	// Wait says what the step waits for.
	Wait Wait
	// WakeAt is when the decision changes by itself, with nothing to
	// announce it (a Lease expiring, a deadline passing); zero if never.
	WakeAt time.Time
	// Next says when the next step runs.
	Next Next
	// wakeAt is when a source's work changes by itself, folded into
	// WakeAt.
	wakeAt time.Time
}

// Destructive reports whether the decision deletes or releases anything.
func (d Decision) Destructive() bool {
	for _, a := range d.Actions {
		if a.Destructive() {
			return true
		}
	}
	return false
}

// Finished reports whether the step reports Succeeded=True.
func (d Decision) Finished() bool {
	return d.Phase == s3gwv1alpha1.PhaseSucceeded && d.Reason != ""
}

// Does reports whether the decision asks for an action of the kind.
func (d Decision) Does(kind failover.ActionKind) bool {
	for _, a := range d.Actions {
		if a.Kind == kind {
			return true
		}
	}
	return false
}

// block is the decision's block on a condition type, or nil.
func (d Decision) block(condType string) *failover.Block {
	for i := range d.Blocks {
		if d.Blocks[i].Condition == condType {
			return &d.Blocks[i]
		}
	}
	return nil
}
