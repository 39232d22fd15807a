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

package controllers

import (
	"context"
	"fmt"
	"strings"

	"github.com/medik8s/common/pkg/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// setStatus writes the pass's observation and decision into the in-memory
// status, and nothing else: no events, metrics or logs (recordTransition
// has those). patchStatus persists it once, at the end of the pass.
func setStatus(st *s3gwv1alpha1.S3GWRemediationStatus, s *scope) {
	d := s.decision
	st.NodeName = s.nodeName
	st.LastError = ""
	st.ObservedGeneration = s.rem.Generation
	if st.StartTime == nil && controllerutil.ContainsFinalizer(s.rem, Finalizer) {
		st.StartTime = &s.now
	}
	if d.RecordEpisode != nil {
		st.FailureEpisode = failureEpisode(*d.RecordEpisode)
	}
	st.Targets = s.targets
	if d.RestartEpisode != nil {
		restartEpisode(st, *d.RestartEpisode, s.now)
	}
	if s.addedTaint != nil {
		st.AddedTaints = append(withoutTaint(st.AddedTaints, *s.addedTaint), *s.addedTaint)
	}
	if s.delegate != nil {
		st.Delegate = s.delegate
	}
	if d.Gate.Open && d.Phase != s3gwv1alpha1.PhaseWaitingForFencing {
		st.FencingEvidence = d.Gate.Evidence
	}
	for _, c := range d.Conditions {
		// The pass's clock, not the wall clock, stamps transitions.
		c.ObservedGeneration, c.LastTransitionTime = s.rem.Generation, s.now
		meta.SetStatusCondition(&st.Conditions, c)
	}
	if d.Phase != st.Phase {
		st.Phase, st.PhaseTransitionTime = d.Phase, &s.now
	}
	if d.Finished() && st.CompletionTime == nil {
		st.CompletionTime = &s.now
	}
}

// recordTransition is the one place a pass's transitions are told: its
// logs, events and metrics, judged by comparing the status before the pass
// with the status setStatus made.
func (r *RemediationReconciler) recordTransition(ctx context.Context, s *scope, before s3gwv1alpha1.S3GWRemediationStatus) {
	log := logf.FromContext(ctx)
	d, after := s.decision, &s.rem.Status
	if d.RestartEpisode != nil {
		log.Info("Starting over: the node failed again after the recorded failure")
	}
	if d.RecordTargets {
		log.Info("Recording s3gw pods on the node", "count", len(after.Targets))
		r.skippedVolumeEvents(ctx, s)
	}
	r.refusedPodsEvent(s, &before)
	r.Metrics.SetFencingBlocked(s.rem.UID, fencingBlocked(d))
	r.Metrics.SetPhase(client.ObjectKeyFromObject(s.rem), s.nodeName, string(after.Phase))

	if before.Phase == after.Phase {
		return
	}
	if before.Phase != "" && before.PhaseTransitionTime != nil {
		r.Metrics.PhaseEnded(string(before.Phase), since(s.now, before.PhaseTransitionTime))
	}
	log.Info("Entering phase", "phase", after.Phase, "from", before.Phase)
	if final(after.Phase) && !final(before.Phase) {
		r.Metrics.RemediationEnded(string(after.Phase), conditionReason(d, s3gwv1alpha1.ConditionSucceeded))
	}
	r.phaseEvent(s, after.Phase)
}

// fencingBlocked names what a remediation waiting for fencing misses, for
// the fencing_blocked gauge; "" when it is not waiting.
func fencingBlocked(d failover.Decision) string {
	switch {
	case d.Phase != s3gwv1alpha1.PhaseWaitingForFencing:
		return ""
	case d.Gate.Open:
		// Open on storage isolation only, while the release needs more.
		return "ShutdownProof"
	default:
		return strings.Join(d.Gate.MissingSources, ",")
	}
}

// failureEpisode converts a failure episode for status.
func failureEpisode(e failover.Episode) *s3gwv1alpha1.FailureEpisode {
	out := &s3gwv1alpha1.FailureEpisode{ReadyStatus: e.Ready}
	if !e.ReadySince.IsZero() {
		out.NotReadySince = ptr.To(metav1.NewTime(e.ReadySince))
	}
	if !e.KubeletPosted.IsZero() {
		out.KubeletPostedAt = ptr.To(metav1.NewTime(e.KubeletPosted))
	}
	return out
}

// restartEpisode forgets what belonged to the old failure: targets,
// evidence, conditions and times. Added taints and the delegate stay
// recorded: they are still to be cleaned up.
func restartEpisode(st *s3gwv1alpha1.S3GWRemediationStatus, e failover.Episode, now metav1.Time) {
	st.FailureEpisode = failureEpisode(e)
	st.Targets, st.FencingEvidence, st.Conditions = nil, nil, nil
	st.StartTime, st.CompletionTime = &now, nil
}

// withoutTaint drops the recorded taints with the key and effect.
func withoutTaint(taints []corev1.Taint, taint corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if !t.MatchTaint(&taint) {
			out = append(out, t)
		}
	}
	return out
}

// refusedPodsEvent warns, when it changes, that the selector matches pods
// the controller never touches.
func (r *RemediationReconciler) refusedPodsEvent(s *scope, before *s3gwv1alpha1.S3GWRemediationStatus) {
	next := s.decision.Condition(s3gwv1alpha1.ConditionWorkloadSelectorValid)
	if next == nil || next.Reason != s3gwv1alpha1.ReasonSelectsProtectedPods {
		return
	}
	prev := meta.FindStatusCondition(before.Conditions, s3gwv1alpha1.ConditionWorkloadSelectorValid)
	if prev != nil && prev.Reason == next.Reason && prev.Message == next.Message {
		return
	}
	events.WarningEvent(r.Recorder, s.rem, eventProtectedPodsRefused, next.Message)
}

// final is true for phases a remediation ends in (it may still move between
// them, e.g. Failed then Stopped, but it is counted once).
func final(p s3gwv1alpha1.Phase) bool {
	return p == s3gwv1alpha1.PhaseSucceeded || p == s3gwv1alpha1.PhaseFailed || p == s3gwv1alpha1.PhaseStopped
}

// patchStatus is the only status writer. It records the pass's error, skips
// no-op patches, and locks on the resourceVersion the pass read, so a pass
// that read a stale object fails with a conflict and is retried instead of
// overwriting newer status.
func (r *RemediationReconciler) patchStatus(ctx context.Context, original, rem *s3gwv1alpha1.S3GWRemediation, passErr error) error {
	if passErr != nil {
		rem.Status.LastError = passErr.Error()
	}
	if equality.Semantic.DeepEqual(original.Status, rem.Status) {
		return nil
	}
	patch := client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Status().Patch(ctx, rem, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("patching status: %w", err)
	}
	return nil
}
