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

import (
	"fmt"
	"strings"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Decide is the failover decision: given what a pass observed, what to do
// next. It stops at the first step that does not hold; nothing destructive
// is decided unless the node is found, not timed out, not Ready, its targets
// are recorded and the fencing gate is open.
func Decide(o Observation) Decision {
	d := decide(o)
	switch {
	case o.Episode == nil && d.RestartEpisode == nil && o.Node != nil && !o.Node.Ready:
		// The first pass of a failure records it, with whatever it decides.
		episode := o.Node.Heartbeat.Episode()
		d.RecordEpisode = &episode
	case o.Episode != nil && o.Node != nil && o.Node.Ready:
		// The node is back: what fenced the recorded failure is done.
		d.RecordEpisode = o.Episode.recovery(o.Node.Heartbeat, o.Now)
	}
	d.RemoveOwnTaint = OwnTaintDone(o)
	if d.Wait != WaitNone {
		d.WakeAt = nextChange(o)
	}
	d.DropTaintOwner = o.Node != nil && o.Node.StaleTaintOwner
	return d
}

// OwnTaintDone reports whether the out-of-service taint this remediation
// added has done its work while NHC still keeps the CR (healthyDelay, a
// paused or Disabled NodeHealthCheck): the node is Ready again, and every
// recorded target is replaced, its pod gone, its volumes released from the
// node and a Ready replacement on another node, which has them attached
// there. Left on, the NoExecute taint would evict every pod scheduled onto
// the healthy node. SNR likewise removes its taint once the node's pods and
// VolumeAttachments are gone (self-node-remediation,
// internal/controller/selfnoderemediation_controller.go,
// useOutOfServiceTaint and isResourceDeletionCompleted). A taint someone
// else added is never ours to remove; a timed-out or excluded pass reads no
// targets and removes nothing, leaving it to the cleanup on deletion.
func OwnTaintDone(o Observation) bool {
	if o.Node == nil || !o.Node.Ready || o.Node.OutOfServiceTaint == nil || !o.Node.OutOfServiceTaint.Ours ||
		len(o.Targets) == 0 {
		return false
	}
	for _, t := range o.Targets {
		if !t.Recorded || t.State() != s3gwv1alpha1.TargetReplaced {
			return false
		}
	}
	return true
}

func decide(o Observation) Decision {
	if d, settled := settled(o); settled {
		return d
	}
	// A finished move stays finished, even if the node came back meanwhile.
	if allRecorded(o.Targets) {
		if done, d := replacementOutcome(o); done {
			return d
		}
	}
	if o.Node.Ready {
		msg := fmt.Sprintf("Node %s is Ready; nothing is evicted or released while it is", o.Node.Name)
		return Decision{
			Phase: s3gwv1alpha1.PhaseWaitingForNodeFailure, Step: StepNodeReady,
			Reason: s3gwv1alpha1.ReasonNodeReady, Message: msg,
			Holds: []Hold{{s3gwv1alpha1.ConditionFenced, s3gwv1alpha1.ReasonNodeReady, msg}},
			Wait:  WaitForNodeFailure,
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
	if !allRecorded(o.Targets) {
		return Decision{
			Phase:         s3gwv1alpha1.PhasePending,
			RecordTargets: true,
			Reason:        s3gwv1alpha1.ReasonRemediationStarted, Message: "Recording the s3gw pods found on the node",
			Wait: WaitForStatus,
		}
	}

	// Moved off under an open gate: nothing destructive is left to hold, so
	// the gate is read no more. Evidence that lapses after the release (a
	// replica node's Lease late, a replica rebuilding) must not send the
	// remediation back to waiting for fencing.
	if o.FencedSince != nil && movedOff(o.Targets) {
		return awaitingReplacement(o)
	}
	// No pod is moved by rules another remediation of the node does not share.
	if held, d := sharedTargetsCheck(o); held {
		return d
	}
	// Whatever the evidence: a refused volume is never released.
	if refused, d := volumeRuleCheck(o); refused {
		return d
	}
	gate := EvaluateGate(o)
	if !gate.Open {
		return waitForFencing(o, gate, "Waiting for fencing evidence: "+gate.Missing)
	}
	if strategy := StrategyOf(o.Spec.Release.Strategy); strategy.NeedsProofOfShutdown && !gate.Disabled && !gate.ProvesShutdown {
		return waitForFencing(o, gate, "The "+string(strategy.Name)+" release needs proof the node is shut down; "+
			"storage isolation only proves Longhorn's volumes are safe")
	}
	if held, d := replicaCheck(o, gate); held {
		return d
	}
	d := actions(o, gate)
	if d.Phase != s3gwv1alpha1.PhaseWaitingForReplacement && releaseDeadlinePassed(o) {
		return releaseTimedOut(o, d)
	}
	return d
}

// settled decides the passes that do no work on the node: an excluded node
// is left alone, a new failure starts over, a reported success is kept, a
// missing node or NHC's timeout end the remediation.
func settled(o Observation) (Decision, bool) {
	excluded := o.Node != nil && o.Node.Excluded && !o.TimedOut
	switch {
	case excluded && !o.Succeeded:
		return excludedNode(o), true
	case !excluded && o.Node != nil && !o.Node.Ready && !o.TimedOut && o.Episode != nil && !o.Episode.Continues(o.Node.Heartbeat):
		return newEpisode(o), true
	case o.Succeeded:
		// Reported once, kept for the episode: NHC may have acted on it.
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
			// The fencer we started stops too, unless it is done.
			TimeOutDelegate: o.Spec.Fencing.Delegate != nil && (o.Evidence.Delegate == nil || o.Evidence.Delegate.MayTimeOut()),
		}, true
	}
	return Decision{}, false
}

// excludedNode holds every step while the node carries the exclude label,
// which may be added after NHC created the CR: SNR re-reads it on every
// reconcile (selfnoderemediation_controller.go, ReconcileManager) and so do
// we. Nothing is created, deleted or released, and nothing is undone: the
// remediation resumes where it stood once the label goes. Succeeded stays
// Unknown: NHC never remediates an excluded node, so it times nothing out
// meanwhile (nodehealthcheck_controller.go, Reconcile skips remediate).
func excludedNode(o Observation) Decision {
	return Decision{
		Phase:  s3gwv1alpha1.PhaseExcluded,
		Reason: s3gwv1alpha1.ReasonExcludedFromRemediation,
		Message: fmt.Sprintf("Node %s is labelled %s=true: no further step is taken until the label is removed",
			o.Node.Name, ExcludeFromRemediationLabel),
	}
}

// newEpisode starts the remediation over: the node was Ready again since
// the recorded failure and failed anew. Its targets, evidence and outcome
// belong to the old failure; only what must still be cleaned up (our taint,
// the delegate) is kept.
func newEpisode(o Observation) Decision {
	episode := o.Node.Heartbeat.Episode()
	episode.RecoveredAt, episode.RecoveredReadySince = o.Episode.RecoveredAt, o.Episode.RecoveredReadySince
	return Decision{
		Phase:          s3gwv1alpha1.PhasePending,
		RestartEpisode: &episode,
		Reason:         s3gwv1alpha1.ReasonNodeFailedAgain,
		Message:        fmt.Sprintf("Node %s failed again after the recorded failure; starting over for the new one", o.Node.Name),
		Wait:           WaitForStatus,
	}
}

// waitForFencing holds every destructive step. It may create the delegate
// fencing CR, which is what produces the evidence, or delete one whose
// success belongs to an earlier failure so that a new one fences anew.
func waitForFencing(o Observation, gate Gate, msg string) Decision {
	reused := o.Spec.Fencing.Delegate != nil && reusableFencer(o) != nil
	reason := s3gwv1alpha1.ReasonWaitingForFencing
	if o.Evidence.DelegateError != "" && !reused {
		reason = s3gwv1alpha1.ReasonInvalidDelegate
	}
	if failure := delegateFailure(o); failure != "" {
		if !othersMayStillHold(o) {
			return delegateFailed(o, gate, failure)
		}
		reason = s3gwv1alpha1.ReasonDelegateFailed
	}
	createDelegate := o.Spec.Fencing.Delegate != nil && o.Evidence.Delegate == nil && o.Evidence.DelegateError == "" && !reused
	if unstopped := stopsUnconfirmedAfterDetach(o); createDelegate && len(unstopped) > 0 {
		createDelegate, reason = false, s3gwv1alpha1.ReasonReplicaStopUnconfirmed
		msg += "; no delegate is created while a replica Longhorn detached may hold the last writes alone, " +
			"since a fencer's own release would start the new engine without it (" + strings.Join(unstopped, "; ") + ")"
	}
	return Decision{
		Phase: s3gwv1alpha1.PhaseWaitingForFencing, Step: StepFencing,
		Reason: s3gwv1alpha1.ReasonWaitingForFencing, Message: msg,
		Holds:          []Hold{{s3gwv1alpha1.ConditionFenced, reason, msg}},
		Gate:           gate,
		CreateDelegate: createDelegate,
		DeleteDelegate: delegateStale(o),
		Wait:           WaitForFencing,
	}
}

// delegateFailed ends the remediation with Succeeded=False: the fencer gave
// up, and no other source can prove the node fenced without an admin's
// hand, so an escalating NHC moves on at once rather than after the step's
// timeout. A later pass still acts if evidence turns up after all (an
// admin's taint) while NHC keeps the CR.
func delegateFailed(o Observation, gate Gate, failure string) Decision {
	msg := fmt.Sprintf("%s; no other evidence source can still prove node %s fenced", failure, o.Node.Name)
	return Decision{
		Phase: s3gwv1alpha1.PhaseFailed, Step: StepFencing,
		Reason: s3gwv1alpha1.ReasonDelegateFailed, Message: msg,
		Holds: []Hold{{s3gwv1alpha1.ConditionFenced, s3gwv1alpha1.ReasonDelegateFailed, msg}},
		Gate:  gate,
		Wait:  WaitAfterFailure,
	}
}
