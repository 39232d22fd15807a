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

package remediation

import (
	"context"
	"strings"
	"time"

	"github.com/medik8s/common/pkg/events"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/step"
)

// transition is what changed between the status a step read and the one
// it wrote.
type transition struct {
	// entered is the phase entered; empty when the phase did not change.
	entered s3gwv1alpha1.Phase
	// left is the phase left, and how long the remediation spent in it;
	// empty when none was left, or it has no start.
	left   s3gwv1alpha1.Phase
	lasted time.Duration
	// ended is true when the remediation reached a final phase from one
	// that was not: remediations_total counts it once.
	ended bool
}

// transitionOf compares the status a step read with the one it wrote.
func transitionOf(before, after *s3gwv1alpha1.S3GWRemediationStatus, now metav1.Time) transition {
	if before.Phase == after.Phase {
		return transition{}
	}
	t := transition{entered: after.Phase, ended: final(after.Phase) && !final(before.Phase)}
	if before.Phase != "" && before.PhaseTransitionTime != nil {
		t.left, t.lasted = before.Phase, now.Sub(before.PhaseTransitionTime.Time)
	}
	return t
}

// tell is the one place a step's transitions are told: its logs, events
// and metrics. It runs once the status the step derived is written (or
// needed no write), so a step that loses the optimistic lock tells nothing
// and counts nothing.
func (r *Reconciler) tell(ctx context.Context, s *scope) {
	log := logf.FromContext(ctx)
	d, before, after := s.decision, &s.before, &s.after
	if d.RestartEpisode != nil {
		log.Info("Starting over: the node failed again after the recorded failure")
	}
	if d.RecordTargets {
		log.Info("Recording s3gw pods on the node", "count", len(after.Memory.Targets))
		r.skippedVolumeEvents(ctx, s)
	}
	r.warn(s)
	r.Metrics.SetFencingBlocked(s.rem.UID, fencingBlocked(d))
	r.Metrics.SetPhase(client.ObjectKeyFromObject(s.rem), s.nodeName, string(after.Phase))

	t := transitionOf(before, after, s.now)
	if t.entered == "" {
		return
	}
	if t.left != "" {
		r.Metrics.PhaseEnded(string(t.left), t.lasted)
	}
	log.Info("Entering phase", "phase", t.entered, "from", before.Phase)
	if t.ended {
		r.Metrics.RemediationEnded(string(t.entered), d.Reason)
	}
	r.phaseEvent(s, t.entered)
}

// fencingBlocked names what a remediation waiting for fencing misses, for
// the fencing_blocked gauge; "" when it is not waiting.
func fencingBlocked(d step.Decision) string {
	switch {
	case d.Phase != s3gwv1alpha1.PhaseWaitingForFencing:
		return ""
	case d.Gate.Open:
		// Open on storage isolation only, while the release needs more.
		return "ShutdownProof"
	case fencedBlock(d) == s3gwv1alpha1.ReasonDelegateNotStarted:
		// What is missing is a fencer that runs at all.
		return s3gwv1alpha1.ReasonDelegateNotStarted
	default:
		return strings.Join(d.Gate.MissingSources, ",")
	}
}

// warnings are the condition reasons told by a Warning event when a
// condition starts giving them, or gives them with another message: the
// selector matches pods never touched; another remediation of the node
// selects the same pods under different rules, so neither acts; the
// delegate failed while another source may still prove the node fenced (a
// remediation that fails on it is told by phaseEvent); the delegate's
// fencer has not picked up its CR.
var warnings = []struct {
	condition, reason, event string
	unlessFailed             bool
}{
	{s3gwv1alpha1.ConditionWorkloadSelectorValid, s3gwv1alpha1.ReasonSelectsProtectedPods, EventProtectedPodsRefused, false},
	{s3gwv1alpha1.ConditionWorkloadEvicted, s3gwv1alpha1.ReasonConflictingRemediations, EventConflictingRemediations, false},
	{s3gwv1alpha1.ConditionFenced, s3gwv1alpha1.ReasonDelegateFailed, EventDelegateFailed, true},
	{s3gwv1alpha1.ConditionFenced, s3gwv1alpha1.ReasonDelegateNotStarted, EventDelegateNotStarted, false},
}

// warn tells each warning a step's status starts to give.
func (r *Reconciler) warn(s *scope) {
	for _, w := range warnings {
		next := meta.FindStatusCondition(s.after.Conditions, w.condition)
		if next == nil || next.Reason != w.reason || (w.unlessFailed && s.after.Phase == s3gwv1alpha1.PhaseFailed) {
			continue
		}
		if prev := meta.FindStatusCondition(s.before.Conditions, w.condition); prev != nil && prev.Reason == next.Reason &&
			prev.Message == next.Message {
			continue
		}
		events.WarningEvent(r.Recorder, s.rem, w.event, next.Message)
	}
}

// final is true for phases a remediation ends in (it may still move between
// them, e.g. Failed then Stopped, but it is counted once).
func final(p s3gwv1alpha1.Phase) bool {
	return p == s3gwv1alpha1.PhaseSucceeded || p == s3gwv1alpha1.PhaseFailed || p == s3gwv1alpha1.PhaseStopped
}

// phaseEvent announces entering a phase once, on the transition.
func (r *Reconciler) phaseEvent(s *scope, phase s3gwv1alpha1.Phase) {
	d := s.decision
	switch phase {
	case s3gwv1alpha1.PhaseStopped:
		events.RemediationStoppedByNHC(r.Recorder, s.rem)
	case s3gwv1alpha1.PhaseWaitingForNodeFailure:
		events.NormalEvent(r.Recorder, s.rem, EventNodeReady, d.Message)
	case s3gwv1alpha1.PhaseWaitingForFencing:
		events.NormalEvent(r.Recorder, s.rem, EventWaitingForFencing, d.Message)
	case s3gwv1alpha1.PhaseExcluded:
		events.WarningEvent(r.Recorder, s.rem, EventRemediationSkipped, d.Message)
	case s3gwv1alpha1.PhaseSucceeded:
		if d.Reason == s3gwv1alpha1.ReasonNoWorkloadOnNode {
			events.NormalEvent(r.Recorder, s.rem, EventNoWorkload, d.Message)
			return
		}
		events.RemediationFinished(r.Recorder, s.rem)
		r.eventBoth(s, EventS3GWMoved, d.Message)
	case s3gwv1alpha1.PhaseFailed, s3gwv1alpha1.PhaseWaitingForStorage:
		if d.Reason == s3gwv1alpha1.ReasonNodeNotFound {
			events.GetTargetNodeFailed(r.Recorder, s.rem)
			return
		}
		if event, ok := failureEvents[d.Reason]; ok {
			events.WarningEvent(r.Recorder, s.rem, event, d.Message)
		}
	}
}

// failureEvents are the Warning events of the reasons a remediation fails
// or waits on storage with.
var failureEvents = map[string]string{
	s3gwv1alpha1.ReasonNoHealthyReplica:        EventNoHealthyReplica,
	s3gwv1alpha1.ReasonRevisionCounterDisabled: EventRevisionCounterOff,
	s3gwv1alpha1.ReasonLonghornUnavailable:     EventLonghornMissing,
	s3gwv1alpha1.ReasonReplacementNotReady:     EventReplacementMissing,
	s3gwv1alpha1.ReasonInvalidWorkloadSelector: EventInvalidSelector,
	s3gwv1alpha1.ReasonEvictionTimedOut:        EventEvictionTimedOut,
	s3gwv1alpha1.ReasonReleaseTimedOut:         EventReleaseTimedOut,
	s3gwv1alpha1.ReasonDelegateFailed:          EventDelegateFailed,
}

// skippedVolumeEvents warns once, when targets are recorded, about volumes
// left alone.
func (r *Reconciler) skippedVolumeEvents(ctx context.Context, s *scope) {
	for _, t := range s.after.Targets {
		for _, v := range t.Volumes {
			if v.State == s3gwv1alpha1.VolumeSkipped {
				logf.FromContext(ctx).Info("Leaving volume alone", "Pod", klog.KRef(t.Namespace, t.Name),
					"claim", v.ClaimName, "reason", v.Reason)
				events.WarningEventf(r.Recorder, s.rem, EventVolumeSkipped, "Volume %s of pod %s/%s is left alone: %s",
					v.ClaimName, t.Namespace, t.Name, v.Reason)
			}
		}
	}
}

// fencedBlock is the reason of what blocks the Fenced condition, or "".
func fencedBlock(d step.Decision) string {
	for _, b := range d.Blocks {
		if b.Condition == s3gwv1alpha1.ConditionFenced {
			return b.Reason
		}
	}
	return ""
}
