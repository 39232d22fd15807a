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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Decide is the failover decision: given what a pass observed, what to do
// next. It stops at the first step that does not hold; nothing destructive
// is decided unless the node is found, not timed out, not Ready, its targets
// are recorded and the fencing gate is open.
func Decide(o Observation) Decision {
	d := decide(o)
	if o.Episode == nil && d.RestartEpisode == nil && o.Node != nil && !o.Node.Ready {
		// The first pass of a failure records it, with whatever it decides.
		episode := o.Node.Heartbeat.Episode()
		d.RecordEpisode = &episode
	}
	if o.Node != nil && !o.Node.Ready && !o.TimedOut && d.RestartEpisode == nil && len(d.Conditions) > 0 {
		// The pass looked for targets with the selector: say what it found.
		d.Conditions = append(d.Conditions, selectorCondition(o))
	}
	if d.Wait != WaitNone {
		d.WakeAt = nextChange(o)
	}
	return d
}

// selectorCondition reports whether the workload selector parses, and the
// pods on the node it matches that the controller refuses to touch.
func selectorCondition(o Observation) metav1.Condition {
	switch {
	case o.SelectorError != "":
		return condition(s3gwv1alpha1.ConditionWorkloadSelectorValid, metav1.ConditionFalse,
			s3gwv1alpha1.ReasonInvalidWorkloadSelector, o.SelectorError)
	case len(o.RefusedPods) > 0:
		return condition(s3gwv1alpha1.ConditionWorkloadSelectorValid, metav1.ConditionFalse,
			s3gwv1alpha1.ReasonSelectsProtectedPods, "The workload selector matches pods that are never touched, left alone: "+
				strings.Join(o.RefusedPods, ", "))
	default:
		return condition(s3gwv1alpha1.ConditionWorkloadSelectorValid, metav1.ConditionTrue,
			s3gwv1alpha1.ReasonWorkloadSelectorValid, "The workload selector matches only pods that may be moved")
	}
}

func decide(o Observation) Decision {
	if d, settled := settled(o); settled {
		return d
	}
	progress := progressConditions(o)
	// A finished move stays finished, even if the node came back meanwhile.
	if allRecorded(o.Targets) {
		if done, d := replacementOutcome(o, progress); done {
			return d
		}
	}
	if o.Node.Ready {
		msg := fmt.Sprintf("Node %s is Ready; nothing is evicted or released while it is", o.Node.Name)
		return Decision{
			Phase: s3gwv1alpha1.PhaseWaitingForNodeFailure,
			Conditions: append(append(processing(s3gwv1alpha1.ReasonNodeReady, msg),
				condition(s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, s3gwv1alpha1.ReasonNodeReady, msg)), progress...),
			Wait: WaitForNodeFailure,
		}
	}
	if o.SelectorError != "" {
		// Nothing can be found with it; a fixed spec is picked up later.
		return Decision{
			Phase:      s3gwv1alpha1.PhaseFailed,
			Conditions: finished(false, s3gwv1alpha1.ReasonInvalidWorkloadSelector, o.SelectorError),
			Wait:       WaitAfterFailure,
		}
	}
	if len(o.Targets) == 0 {
		return Decision{
			Phase: s3gwv1alpha1.PhaseSucceeded,
			Conditions: finished(true, s3gwv1alpha1.ReasonNoWorkloadOnNode,
				fmt.Sprintf("No pod matching the workload selector runs on node %s", o.Node.Name)),
		}
	}
	if !allRecorded(o.Targets) {
		return Decision{
			Phase:         s3gwv1alpha1.PhasePending,
			RecordTargets: true,
			Conditions:    processing(s3gwv1alpha1.ReasonRemediationStarted, "Recording the s3gw pods found on the node"),
			Wait:          WaitForStatus,
		}
	}

	gate := EvaluateGate(o)
	if !gate.Open {
		return waitForFencing(o, gate, "Waiting for fencing evidence: "+gate.Missing, progress)
	}
	if strategy := StrategyOf(o.Spec.Release.Strategy); strategy.NeedsProofOfShutdown && !gate.Disabled && !gate.ProvesShutdown {
		return waitForFencing(o, gate, "The "+string(strategy.Name)+" release needs proof the node is shut down; "+
			"storage isolation only proves Longhorn's volumes are safe", progress)
	}
	fenced := fencedCondition(gate)

	if held, d := replicaCheck(o, gate, fenced, progress); held {
		return d
	}
	d := actions(o, gate, fenced, progress)
	if d.Phase != s3gwv1alpha1.PhaseWaitingForReplacement && releaseDeadlinePassed(o) {
		return releaseTimedOut(o, d, progress)
	}
	return d
}

// settled decides the passes that do no work on the node: a new failure
// starts over, a reported success is kept, a missing node or NHC's timeout
// end the remediation.
func settled(o Observation) (Decision, bool) {
	switch {
	case o.Node != nil && !o.Node.Ready && !o.TimedOut && o.Episode != nil && !o.Episode.Continues(o.Node.Heartbeat):
		return newEpisode(o), true
	case o.Succeeded:
		// Reported once, kept for the episode: NHC may have acted on it.
		return Decision{Phase: s3gwv1alpha1.PhaseSucceeded}, true
	case o.Node == nil:
		return Decision{
			Phase:      s3gwv1alpha1.PhaseFailed,
			Conditions: finished(false, s3gwv1alpha1.ReasonNodeNotFound, "The node to remediate does not exist"),
		}, true
	case o.TimedOut:
		return Decision{
			Phase: s3gwv1alpha1.PhaseStopped,
			Conditions: finished(false, s3gwv1alpha1.ReasonRemediationStoppedByNHC,
				"NodeHealthCheck timed the remediation out; no further step is taken"),
			// The fencer we started stops too.
			TimeOutDelegate: o.Spec.Fencing.Delegate != nil,
		}, true
	}
	return Decision{}, false
}

// newEpisode starts the remediation over: the node was Ready again since
// the recorded failure and failed anew. Its targets, evidence and outcome
// belong to the old failure; only what must still be cleaned up (our taint,
// the delegate) is kept.
func newEpisode(o Observation) Decision {
	episode := o.Node.Heartbeat.Episode()
	msg := fmt.Sprintf("Node %s failed again after the recorded failure; starting over for the new one", o.Node.Name)
	return Decision{
		Phase:          s3gwv1alpha1.PhasePending,
		RestartEpisode: &episode,
		Conditions:     processing(s3gwv1alpha1.ReasonNodeFailedAgain, msg),
		Wait:           WaitForStatus,
	}
}

// waitForFencing holds every destructive step. It may create the delegate
// fencing CR, which is what produces the evidence, or delete one whose
// success belongs to an earlier failure so that a new one fences anew.
func waitForFencing(o Observation, gate Gate, msg string, progress []metav1.Condition) Decision {
	reused := o.Spec.Fencing.Delegate != nil && reusableFencer(o) != nil
	reason := s3gwv1alpha1.ReasonWaitingForFencing
	if o.Evidence.DelegateError != "" && !reused {
		reason = s3gwv1alpha1.ReasonInvalidDelegate
	}
	stale := delegateStale(o)
	return Decision{
		Phase:          s3gwv1alpha1.PhaseWaitingForFencing,
		Gate:           gate,
		CreateDelegate: o.Spec.Fencing.Delegate != nil && o.Evidence.Delegate == nil && o.Evidence.DelegateError == "" && !reused,
		DeleteDelegate: stale,
		Conditions: append(append(processing(s3gwv1alpha1.ReasonWaitingForFencing, msg),
			condition(s3gwv1alpha1.ConditionFenced, metav1.ConditionFalse, reason, msg)), progress...),
		Wait: WaitForFencing,
	}
}

func fencedCondition(gate Gate) metav1.Condition {
	if gate.Disabled {
		return condition(s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingDisabled,
			"fencing.mode is Disabled: acting without fencing evidence (unsafe)")
	}
	return condition(s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingEvidence,
		"Fenced by "+strings.Join(gate.Evidence, ", "))
}

// replicaCheck holds the remediation while a volume still to release has
// no healthy replica on another node (releasing it would only yield a
// faulted volume), has a replica Longhorn cannot reach (it may hold
// acknowledged writes the others lack), or Longhorn cannot be read: all may
// pass (a replica rebuilds, a node returns, Longhorn restarts), so they are
// waited for until the release deadline, and only then reported as failed
// so NHC escalates.
func replicaCheck(o Observation, gate Gate, fenced metav1.Condition, progress []metav1.Condition) (bool, Decision) {
	var unhealthy []string
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if !v.ToRelease() {
				continue
			}
			if !o.LonghornAvailable {
				msg := fmt.Sprintf("Volume %s uses driver.longhorn.io but Longhorn's CRDs are not served; cannot verify replicas or attachments", v.PersistentVolume)
				return true, blocked(o, gate, fenced, progress, s3gwv1alpha1.ReasonLonghornUnavailable, msg)
			}
			if v.LonghornVolumeMissing {
				msg := fmt.Sprintf("Longhorn volume %s not found in %s; check release.longhornNamespace", v.LonghornVolume,
					o.Spec.Release.LonghornNamespace)
				return true, blocked(o, gate, fenced, progress, s3gwv1alpha1.ReasonLonghornUnavailable, msg)
			}
			if !v.healthyReplicaElsewhere(o.Node.Name, o.Now) {
				unhealthy = append(unhealthy, v.LonghornVolume)
			}
		}
	}
	if len(unhealthy) > 0 {
		msg := fmt.Sprintf("No healthy replica on another node for %s: releasing would only fault the volume", strings.Join(unhealthy, ", "))
		return true, blocked(o, gate, fenced, progress, s3gwv1alpha1.ReasonNoHealthyReplica, msg)
	}
	if stranded := strandedToRelease(o); len(stranded) > 0 && !gate.Disabled && o.Spec.Release.RequireReachableReplicasOrDefault() {
		msg := "Replicas Longhorn cannot reach may hold writes the old engine acknowledged while cut off from the others, " +
			"before any fence stopped it; a new engine started without them would lose those writes: " + strings.Join(stranded, ", ")
		return true, blocked(o, gate, fenced, progress, s3gwv1alpha1.ReasonReplicasUnreachable, msg)
	}
	return false, Decision{}
}

// strandedToRelease lists the stranded replicas of the volumes still to
// release.
func strandedToRelease(o Observation) []string {
	var out []string
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if v.ToRelease() {
				out = append(out, strandedReplicas(o, v)...)
			}
		}
	}
	return out
}

// blocked reports a storage problem that may pass: Processing while the
// release deadline has not passed, then Succeeded=False.
func blocked(o Observation, gate Gate, fenced metav1.Condition, progress []metav1.Condition, reason, msg string) Decision {
	if releaseDeadlinePassed(o) {
		return failedDecision(gate, fenced, progress, reason, msg)
	}
	return Decision{
		Phase:      s3gwv1alpha1.PhaseWaitingForStorage,
		Gate:       gate,
		Conditions: append(append(processing(reason, msg), fenced), progress...),
		Wait:       WaitForStorage,
	}
}

func failedDecision(gate Gate, fenced metav1.Condition, progress []metav1.Condition, reason, msg string) Decision {
	return Decision{
		Phase:      s3gwv1alpha1.PhaseFailed,
		Gate:       gate,
		Conditions: append(append(finished(false, reason, msg), fenced), progress...),
		Wait:       WaitAfterFailure,
	}
}

// actions decides the writes of an open gate: force-delete the pods still
// present, then release the volumes of the pods gone from the API by the
// configured strategy. While a target's pod is in the API, even held by a
// finalizer, the attach-detach controller still wants its volume on the
// node, so nothing of it is released.
//
// A force-delete is itself a deferred release: once the pod is gone, the
// attach-detach controller force-detaches its volume from an unhealthy node
// after 6 minutes, whatever the evidence says by then. So a pod is
// force-deleted only when its volumes can be released right after, while
// the evidence just checked still holds.
func actions(o Observation, gate Gate, fenced metav1.Condition, progress []metav1.Condition) Decision {
	d := Decision{Gate: gate}
	plan := planRelease(o)
	var finalized []string
	for _, t := range o.Targets {
		switch {
		case !t.PodPresent || t.ForceDeleted || waitsForKubelet(o, t):
		case heldByFinalizers(gate, t):
			finalized = append(finalized, fmt.Sprintf("%s (%s)", t.displayName(), strings.Join(t.Finalizers, ", ")))
		default:
			d.Evict = append(d.Evict, t)
		}
	}
	d.Release = plan.release

	switch {
	case plan.podsPresent:
		d.Phase = s3gwv1alpha1.PhaseEvicting
	case plan.pending:
		d.Phase = s3gwv1alpha1.PhaseReleasing
	default:
		d.Phase = s3gwv1alpha1.PhaseWaitingForReplacement
	}
	msg := fmt.Sprintf("Moving s3gw off node %s (%s)", o.Node.Name, d.Phase)
	if plan.waitingForKubelet {
		msg = fmt.Sprintf("Waiting for node %s's kubelet: it still reports Ready=False or renews its Lease, "+
			"so it may still run s3gw and it unmounts its volumes itself once it stops the pods; "+
			"ControllerDetach only edits a dead kubelet's volumesInUse, and a pod is force-deleted "+
			"only when its volumes can be released right after", o.Node.Name)
		progress = replaceCondition(progress, condition(s3gwv1alpha1.ConditionAttachmentsReleased,
			metav1.ConditionFalse, s3gwv1alpha1.ReasonKubeletAlive, msg))
	}
	if len(finalized) > 0 {
		msg = "Not force-deleting pods that finalizers would keep in the API: " + strings.Join(finalized, "; ") +
			". The attach-detach controller force-detaches a deleted pod's volume 6 minutes after it leaves the API, " +
			"and storage isolation, the only evidence, may no longer hold by then; remove the finalizers or add a fencer"
		progress = replaceCondition(progress, condition(s3gwv1alpha1.ConditionWorkloadEvicted,
			metav1.ConditionFalse, s3gwv1alpha1.ReasonPodFinalizers, msg))
	}
	d.Conditions = append(append(processing(s3gwv1alpha1.ReasonRemediationStarted, msg), fenced), progress...)
	d.Wait = WaitForRelease
	if d.Phase == s3gwv1alpha1.PhaseWaitingForReplacement {
		d.Wait = WaitForReplacement
	}
	return d
}

// releasePlan is what releasing the targets' volumes takes this pass.
type releasePlan struct {
	// pending: a volume is still attached to the node.
	pending bool
	// podsPresent: a target pod is still in the API.
	podsPresent bool
	// waitingForKubelet: the strategy waits for a live kubelet.
	waitingForKubelet bool
	// release is the strategy's writes.
	release ReleasePlan
}

// planRelease releases, by the configured strategy, the volumes of the
// targets whose pods are gone from the API.
func planRelease(o Observation) releasePlan {
	strategy := StrategyOf(o.Spec.Release.Strategy)
	p := releasePlan{release: ReleasePlan{Strategy: strategy.Name}}
	kubeletAlive := !o.Node.Heartbeat.Lost(o.Now)
	var nodeWide []Volume
	for _, t := range o.Targets {
		p.podsPresent = p.podsPresent || t.PodPresent
		p.waitingForKubelet = p.waitingForKubelet || (t.PodPresent && waitsForKubelet(o, t))
		for _, v := range t.Volumes {
			if !v.ToRelease() {
				continue
			}
			p.pending = true
			switch {
			case t.PodPresent:
				// The attach-detach controller still wants it on the node.
			case strategy.VolumeWrite == nil:
				// One write for the node serves every volume.
				nodeWide = append(nodeWide, v)
			case !strategy.VolumeWrite(v):
				// Nothing left to write for it.
			case strategy.WaitsForLostKubelet && kubeletAlive:
				// A live kubelet would undo the write.
				p.waitingForKubelet = true
			default:
				p.release.Volumes = append(p.release.Volumes, v)
			}
		}
	}
	if strategy.NodeWrite != nil && p.pending && !p.podsPresent && strategy.NodeWrite(o.Node) {
		p.release.Node, p.release.Volumes = true, nodeWide
	}
	return p
}

// waitsForKubelet is true while t's volumes wait for a strategy that needs
// the node's kubelet lost, and it is alive: the release could not follow a
// force-delete of t's pod.
func waitsForKubelet(o Observation, t Target) bool {
	strategy := StrategyOf(o.Spec.Release.Strategy)
	if !strategy.WaitsForLostKubelet || strategy.VolumeWrite == nil || o.Node.Heartbeat.Lost(o.Now) {
		return false
	}
	for _, v := range t.Volumes {
		if v.ToRelease() && strategy.VolumeWrite(v) {
			return true
		}
	}
	return false
}

// heldByFinalizers is true for a pod with finalizers while the gate rests on
// storage isolation alone: the force-delete would leave it in the API, and
// whenever its finalizers go the attach-detach controller's clock starts,
// a release at a time no check of ours covers. Isolation is a fact of this
// moment (a rack partition can take the replicas' nodes later); a fenced
// node stays fenced.
func heldByFinalizers(gate Gate, t Target) bool {
	return len(t.Finalizers) > 0 && !gate.Disabled && !gate.ProvesShutdown && !allReleased([]Target{t})
}

// replaceCondition returns conds with the condition of c's type replaced by c.
func replaceCondition(conds []metav1.Condition, c metav1.Condition) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(conds))
	for _, existing := range conds {
		if existing.Type == c.Type {
			existing = c
		}
		out = append(out, existing)
	}
	return out
}

// replacementOutcome ends the remediation once every attachment is released
// and every target has a Ready replacement elsewhere, or reports
// ReplacementNotReady once the replacement timeout has passed since release.
func replacementOutcome(o Observation, progress []metav1.Condition) (bool, Decision) {
	if !allReleased(o.Targets) || anyPodPresent(o.Targets) {
		return false, Decision{}
	}
	if allReplaced(o.Targets) {
		return true, Decision{
			Phase: s3gwv1alpha1.PhaseSucceeded,
			Conditions: append(finished(true, s3gwv1alpha1.ReasonRemediationFinished,
				fmt.Sprintf("s3gw runs again on another node; node %s holds no s3gw attachment", o.Node.Name)), progress...),
		}
	}
	timeout := o.Spec.ReplacementTimeoutOrDefault()
	if o.ReleasedSince != nil && o.Now.Sub(*o.ReleasedSince) > timeout {
		return true, Decision{
			Phase: s3gwv1alpha1.PhaseFailed,
			Conditions: append(finished(false, s3gwv1alpha1.ReasonReplacementNotReady,
				fmt.Sprintf("No Ready replacement %s after the attachments were released", timeout)), progress...),
			Wait: WaitAfterFailure,
		}
	}
	return false, Decision{}
}

func allRecorded(targets []Target) bool {
	for _, t := range targets {
		if !t.Recorded {
			return false
		}
	}
	return len(targets) > 0
}

func anyPodPresent(targets []Target) bool {
	for _, t := range targets {
		if t.PodPresent {
			return true
		}
	}
	return false
}

func allReleased(targets []Target) bool {
	for _, t := range targets {
		for _, v := range t.Volumes {
			if v.ToRelease() {
				return false
			}
		}
	}
	return true
}

func allReplaced(targets []Target) bool {
	for _, t := range targets {
		if t.Replacement == nil {
			return false
		}
	}
	return true
}

// progressConditions reports the observed facts of each step, whatever the
// pass decides.
func progressConditions(o Observation) []metav1.Condition {
	if len(o.Targets) == 0 {
		return nil
	}
	var present, attached, waiting []string
	for _, t := range o.Targets {
		if t.PodPresent {
			present = append(present, t.displayName())
		}
		if t.Replacement == nil {
			waiting = append(waiting, t.displayName())
		}
		for _, v := range t.Volumes {
			if v.ToRelease() {
				attached = append(attached, v.LonghornVolume)
			}
		}
	}
	return []metav1.Condition{
		factCondition(s3gwv1alpha1.ConditionWorkloadEvicted, present, s3gwv1alpha1.ReasonEvicted,
			"No target pod is left in the API", s3gwv1alpha1.ReasonEvicting, "Pods still on the node: "),
		factCondition(s3gwv1alpha1.ConditionAttachmentsReleased, attached, s3gwv1alpha1.ReasonReleased,
			"No target volume is attached to the failed node", s3gwv1alpha1.ReasonReleasing, "Still attached to the failed node: "),
		factCondition(s3gwv1alpha1.ConditionReplacementReady, waiting, s3gwv1alpha1.ReasonReplacementReady,
			"Every target has a Ready replacement on another node", s3gwv1alpha1.ReasonWaitingForReplacement, "No Ready replacement yet for: "),
	}
}

func factCondition(condType string, pending []string, doneReason, doneMsg, pendingReason, pendingPrefix string) metav1.Condition {
	if len(pending) == 0 {
		return condition(condType, metav1.ConditionTrue, doneReason, doneMsg)
	}
	return condition(condType, metav1.ConditionFalse, pendingReason, pendingPrefix+strings.Join(pending, ", "))
}
