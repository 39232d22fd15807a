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
	"fmt"
	"slices"
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// Decide is the failover decision: given what a step knows, what to do
// next. It stops at the first rule that is not met; nothing destructive
// is decided unless the node is found, not timed out, not Ready, its targets
// are recorded and the fencing gate is open.
func Decide(s failover.State) Decision {
	d := decide(s)
	switch {
	case s.Episode == nil && d.RestartEpisode == nil && s.Node != nil && !s.Node.Ready:
		// The first step of a failure records it, with whatever it decides.
		episode := s.Node.Heartbeat.Episode()
		d.RecordEpisode = &episode
	case s.Episode != nil && s.Node != nil && s.Node.Ready:
		// The node is back: what fenced the recorded failure is done.
		d.RecordEpisode = s.Episode.Recovery(s.Node.Heartbeat, s.Now)
	}
	// What a release strategy left on the node goes first, its work done.
	d.Actions = append(release.Tidy(s), d.Actions...)
	if d.Wait != WaitNone {
		d.WakeAt = earliest(nextChange(s), d.wakeAt)
	}
	switch {
	case d.Wait == WaitForRecord:
		d.Next = NextNow
	case d.Does(failover.Evict):
		d.Next = NextNowWritingForThis
	}
	d.State = s
	return d
}

func decide(o failover.State) Decision {
	if d, settled := settled(o); settled {
		return d
	}
	// A finished move stays finished, even if the node came back meanwhile.
	if failover.AllRecorded(o.Targets) {
		if done, d := replacementOutcome(o); done {
			return d
		}
	}
	if o.Node.Ready {
		msg := fmt.Sprintf("Node %s is Ready; nothing is evicted or released while it is", o.Node.Name)
		return Decision{
			Phase: s3gwv1alpha1.PhaseWaitingForNodeFailure, Stage: StageNodeReady,
			Reason: s3gwv1alpha1.ReasonNodeReady, Message: msg,
			Blocks: []failover.Block{{Condition: s3gwv1alpha1.ConditionFenced, Reason: s3gwv1alpha1.ReasonNodeReady, Message: msg}},
			Wait:   WaitForNodeFailure,
		}
	}
	if o.SelectorError != "" {
		// Nothing can be found with it; a fixed spec is picked up later.
		return Decision{
			Phase:  s3gwv1alpha1.PhaseFailed,
			Reason: s3gwv1alpha1.ReasonInvalidWorkloadSelector, Message: o.SelectorError,
			Wait: WaitAfterFailure,
		}
	}
	if len(o.Targets) == 0 {
		return Decision{
			Phase:   s3gwv1alpha1.PhaseSucceeded,
			Reason:  s3gwv1alpha1.ReasonNoWorkloadOnNode,
			Message: fmt.Sprintf("No pod matching the workload selector runs on node %s", o.Node.Name),
		}
	}
	if !failover.AllRecorded(o.Targets) {
		return Decision{
			Phase:         s3gwv1alpha1.PhasePending,
			RecordTargets: true,
			Reason:        s3gwv1alpha1.ReasonRemediationStarted, Message: "Recording the s3gw pods found on the node",
			Wait: WaitForRecord,
		}
	}

	// Moved off under an open gate: nothing destructive is left to block, so
	// the gate is read no more. Evidence that lapses after the release (a
	// replica node's Lease late, a replica rebuilding) must not send the
	// remediation back to waiting for fencing.
	if o.FencedSince != nil && failover.MovedOff(o.Targets) {
		return awaitingReplacement(o)
	}
	// No pod is moved by rules another remediation of the node does not share.
	if shared, d := sharedTargetsCheck(o); shared {
		return d
	}
	// Whatever the evidence: a refused volume is never released.
	if rule, refused := release.Refused(o); len(refused) > 0 {
		return refusedVolumes(rule, refused)
	}
	gate := evidence.Evaluate(o)
	if !gate.Open {
		return waitForFencing(o, gate, "Waiting for fencing evidence: "+gate.Missing)
	}
	if strategy := release.Of(o.Spec.Release.Strategy); strategy.NeedsProofOfShutdown && !gate.Disabled && !gate.ProvesShutdown {
		return waitForFencing(o, gate, "The "+string(strategy.Name)+" release needs proof the node is shut down; "+
			"storage isolation only proves Longhorn's volumes are safe")
	}
	if reason, msg := release.StorageProblem(o, gate); reason != "" {
		return waitForStorage(o, gate, reason, msg)
	}
	d := move(o, gate)
	if d.Phase != s3gwv1alpha1.PhaseWaitingForReplacement && releaseDeadlinePassed(o) {
		return releaseTimedOut(o, d)
	}
	return d
}

// settled decides the steps that do no work on the node: an excluded node
// is left alone, a new failure starts over, a reported success is kept, a
// missing node or NHC's timeout end the remediation.
func settled(o failover.State) (Decision, bool) {
	excluded := o.Node != nil && o.Node.Excluded && !o.TimedOut
	switch {
	case excluded && !o.Succeeded:
		return excludedNode(o), true
	case !excluded && o.Node != nil && !o.Node.Ready && !o.TimedOut && o.Episode != nil && !o.Episode.Continues(o.Node.Heartbeat):
		return newEpisode(o), true
	case o.Succeeded:
		// Reported once, kept for the failure: NHC may have acted on it.
		return Decision{Phase: s3gwv1alpha1.PhaseSucceeded}, true
	case o.Node == nil:
		return Decision{
			Phase:  s3gwv1alpha1.PhaseFailed,
			Reason: s3gwv1alpha1.ReasonNodeNotFound, Message: "The node to remediate does not exist",
		}, true
	case o.TimedOut:
		return Decision{
			Phase:   s3gwv1alpha1.PhaseStopped,
			Reason:  s3gwv1alpha1.ReasonRemediationStoppedByNHC,
			Message: "NodeHealthCheck timed the remediation out; no further step is taken",
			// What a source started stops too, unless it is done.
			Actions: timedOut(o),
		}, true
	}
	return Decision{}, false
}

// timedOut passes NHC's time-out on to what each enabled source started.
func timedOut(o failover.State) []failover.Action {
	var out []failover.Action
	for _, source := range evidence.Enabled(o.Spec.Fencing) {
		if source.TimedOut != nil {
			out = append(out, source.TimedOut(o)...)
		}
	}
	return out
}

// excludedNode blocks every step while the node carries the exclude label,
// which may be added after NHC created the CR: SNR re-reads it on every
// reconcile (selfnoderemediation_controller.go, ReconcileManager) and so do
// we. Nothing is created, deleted or released, and nothing is undone: the
// remediation resumes where it stood once the label goes. Succeeded stays
// Unknown: NHC never remediates an excluded node, so it times nothing out
// meanwhile (nodehealthcheck_controller.go, Reconcile skips remediate).
func excludedNode(o failover.State) Decision {
	return Decision{
		Phase:  s3gwv1alpha1.PhaseExcluded,
		Reason: s3gwv1alpha1.ReasonExcludedFromRemediation,
		Message: fmt.Sprintf("Node %s is labelled %s=true: no further step is taken until the label is removed",
			o.Node.Name, failover.ExcludeFromRemediationLabel),
	}
}

// newEpisode starts the remediation over: the node was Ready again since
// the recorded failure and failed anew. Its targets, evidence and outcome
// belong to the old failure; only what must still be cleaned up (our taint,
// the delegate) is kept.
func newEpisode(o failover.State) Decision {
	episode := o.Node.Heartbeat.Episode()
	episode.RecoveredAt, episode.RecoveredReadySince = o.Episode.RecoveredAt, o.Episode.RecoveredReadySince
	return Decision{
		Phase:          s3gwv1alpha1.PhasePending,
		RestartEpisode: &episode,
		Reason:         s3gwv1alpha1.ReasonNodeFailedAgain,
		Message:        fmt.Sprintf("Node %s failed again after the recorded failure; starting over for the new one", o.Node.Name),
		Wait:           WaitForRecord,
	}
}

// waitForFencing blocks every destructive step while each enabled source
// does its work (a delegate creates its fencer, or replaces one whose
// success belongs to an earlier failure). A source that gave up fails the
// remediation once no other may still prove the node fenced.
func waitForFencing(o failover.State, gate evidence.Gate, msg string) Decision {
	reason := s3gwv1alpha1.ReasonWaitingForFencing
	var actions []failover.Action
	var wakeAt time.Time
	for _, source := range evidence.Enabled(o.Spec.Fencing) {
		if source.Failed != nil {
			if failure := source.Failed(o); failure != "" && !othersMayStillProve(o, source.Name) {
				return sourceFailed(o, gate, source, failure)
			}
		}
		if source.Working != nil {
			work := source.Working(o)
			if work.Reason != "" {
				reason = work.Reason
			}
			if work.Message != "" {
				msg += "; " + work.Message
			}
			wakeAt = earliest(wakeAt, work.WakeAt)
			actions = append(actions, work.Actions...)
		}
	}
	if slices.ContainsFunc(actions, startsFencer) {
		// A fencer's own release would have Longhorn start the new engine
		// without a replica that may have the old engine's last writes.
		if held, why := release.FencerHold(o); held != "" {
			actions = slices.DeleteFunc(actions, startsFencer)
			reason = held
			msg += "; no fencer is started while " + why
		}
	}
	return Decision{
		Phase: s3gwv1alpha1.PhaseWaitingForFencing, Stage: StageFencing,
		Reason: s3gwv1alpha1.ReasonWaitingForFencing, Message: msg,
		Blocks:  []failover.Block{{Condition: s3gwv1alpha1.ConditionFenced, Reason: reason, Message: msg}},
		Gate:    gate,
		Actions: actions,
		Wait:    WaitForFencing,
		wakeAt:  wakeAt,
	}
}

func startsFencer(a failover.Action) bool { return a.Kind == failover.CreateFencer }

// othersMayStillProve reports whether an enabled evidence source other than
// the one named may still prove the node's current failure fenced
// (Source.MayStillProve); when the release strategy needs proof of
// shutdown, only the sources that give it count.
func othersMayStillProve(o failover.State, except string) bool {
	needsShutdown := release.Of(o.Spec.Release.Strategy).NeedsProofOfShutdown
	for _, source := range evidence.Enabled(o.Spec.Fencing) {
		switch {
		case source.Name == except, source.MayStillProve == nil, needsShutdown && !source.ProvesShutdown:
			continue
		}
		if source.MayStillProve(o) {
			return true
		}
	}
	return false
}

// sourceFailed ends the remediation with Succeeded=False: a source's fencer
// gave up, and no other source can prove the node fenced without an admin's
// hand, so an escalating NHC moves on at once rather than after the step's
// timeout. A later step still acts if evidence turns up after all (an
// admin's taint) while NHC keeps the CR.
func sourceFailed(o failover.State, gate evidence.Gate, source evidence.Source, failure string) Decision {
	msg := fmt.Sprintf("%s; no other evidence source can still prove node %s fenced", failure, o.Node.Name)
	return Decision{
		Phase: s3gwv1alpha1.PhaseFailed, Stage: StageFencing,
		Reason: source.FailureReason, Message: msg,
		Blocks: []failover.Block{{Condition: s3gwv1alpha1.ConditionFenced, Reason: source.FailureReason, Message: msg}},
		Gate:   gate,
		Wait:   WaitAfterFailure,
	}
}

// refusedVolumes fails the remediation when a volume rule refuses a volume
// still to release: nothing is force-deleted or released, and no fencer
// fences the node for a move that cannot follow.
func refusedVolumes(rule release.VolumeRule, refused []string) Decision {
	msg := rule.Why(refused)
	return Decision{
		Phase: s3gwv1alpha1.PhaseFailed, Stage: StageVolumeRules,
		Reason: rule.Reason, Message: msg,
		Blocks: []failover.Block{{Condition: s3gwv1alpha1.ConditionAttachmentsReleased, Reason: rule.Reason, Message: msg}},
		Wait:   WaitAfterFailure,
	}
}

// waitForStorage reports a storage problem that may pass: Processing while
// the release deadline has not passed, then Succeeded=False so NHC
// escalates.
func waitForStorage(o failover.State, gate evidence.Gate, reason, msg string) Decision {
	d := Decision{Phase: s3gwv1alpha1.PhaseWaitingForStorage, Stage: StageStorage, Gate: gate,
		Reason: reason, Message: msg, Wait: WaitForStorage}
	if releaseDeadlinePassed(o) {
		d.Phase, d.Wait = s3gwv1alpha1.PhaseFailed, WaitAfterFailure
	}
	return d
}

// move is the decision of an open gate: the release strategy's plan of the
// step (release.Plan), its phase and what blocks it.
func move(o failover.State, gate evidence.Gate) Decision {
	m := release.Plan(o, gate)
	d := Decision{Phase: m.Phase, Stage: StageRelease, Gate: gate, Reason: s3gwv1alpha1.ReasonRemediationStarted,
		Message: movingMessage(o, m.Phase), Blocks: m.Blocks, Actions: m.Actions, Wait: WaitForRelease}
	if len(m.Blocks) > 0 {
		d.Message = m.Blocks[len(m.Blocks)-1].Message
	}
	if d.Phase == s3gwv1alpha1.PhaseWaitingForReplacement {
		d.Wait = WaitForReplacement
	}
	return d
}
