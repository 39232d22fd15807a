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
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
)

// updateStatus writes the pass's observation and decision into the
// in-memory status; patchStatus persists it once, at the end of the pass.
func (r *RemediationReconciler) updateStatus(ctx context.Context, s *scope) {
	st := &s.rem.Status
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
	if d.RestartEpisode != nil {
		logf.FromContext(ctx).Info("Starting over: the node failed again after the recorded failure")
		restartEpisode(st, *d.RestartEpisode, s.now)
		s.targets = nil
	}
	if d.RecordTargets {
		logf.FromContext(ctx).Info("Recording s3gw pods on the node", "count", len(s.targets))
		r.skippedVolumeEvents(ctx, s)
	}
	st.Targets = s.targets
	if d.RecordOutOfServiceTaint {
		// Stamped now, so the taint on the node is recognised as ours later.
		taint := fencing.OutOfServiceTaint()
		taint.TimeAdded = ptr.To(s.now.Rfc3339Copy())
		st.AddedTaints = append(withoutTaint(st.AddedTaints, taint), taint)
	}
	if s.delegate != nil {
		st.Delegate = s.delegate
	}
	if d.Gate.Open && d.Phase != s3gwv1alpha1.PhaseWaitingForFencing {
		st.FencingEvidence = d.Gate.Evidence
	}
	r.refusedPodsEvent(s)
	for _, c := range d.Conditions {
		// The pass's clock, not the wall clock, stamps transitions.
		c.ObservedGeneration, c.LastTransitionTime = s.rem.Generation, s.now
		meta.SetStatusCondition(&st.Conditions, c)
	}

	blocked := ""
	if d.Phase == s3gwv1alpha1.PhaseWaitingForFencing {
		blocked = strings.Join(d.Gate.MissingSources, ",")
		if d.Gate.Open {
			// Open on storage isolation only, while the release needs more.
			blocked = "ShutdownProof"
		}
	}
	r.Metrics.SetFencingBlocked(s.rem.UID, blocked)

	if d.Phase == st.Phase {
		return
	}
	if st.Phase != "" && st.PhaseTransitionTime != nil {
		r.Metrics.PhaseEnded(string(st.Phase), since(s.now, st.PhaseTransitionTime))
	}
	logf.FromContext(ctx).Info("Entering phase", "phase", d.Phase, "from", st.Phase)
	previous := st.Phase
	st.Phase, st.PhaseTransitionTime = d.Phase, &s.now
	if final(d.Phase) && !final(previous) {
		r.Metrics.RemediationEnded(string(d.Phase), conditionReason(d, s3gwv1alpha1.ConditionSucceeded))
	}
	if d.Finished() && st.CompletionTime == nil {
		st.CompletionTime = &s.now
	}
	r.phaseEvent(s, d.Phase)
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
func (r *RemediationReconciler) refusedPodsEvent(s *scope) {
	next := findCondition(s.decision.Conditions, s3gwv1alpha1.ConditionWorkloadSelectorValid)
	if next == nil || next.Reason != s3gwv1alpha1.ReasonSelectsProtectedPods {
		return
	}
	prev := meta.FindStatusCondition(s.rem.Status.Conditions, s3gwv1alpha1.ConditionWorkloadSelectorValid)
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
