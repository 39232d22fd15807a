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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/release"
)

// nextStatus derives the status a pass writes from the status it read, what
// it observed and decided (failover.Conditions), and the node as the pass's
// writes left it. It emits nothing: events, metrics and logs follow the
// status patch (recordTransition).
func nextStatus(s *scope) s3gwv1alpha1.S3GWRemediationStatus {
	st, d := *s.rem.Status.DeepCopy(), s.decision
	now := s.now // the status keeps pointers to it
	st.NodeName = s.nodeName
	st.LastError = ""
	st.ObservedGeneration = s.rem.Generation
	if st.StartTime == nil && controllerutil.ContainsFinalizer(s.rem, Finalizer) {
		st.StartTime = &now
	}
	if d.RecordEpisode != nil {
		st.FailureEpisode = failureEpisode(*d.RecordEpisode)
	}
	if n := s.obs.Node; n != nil {
		st.Heartbeat = heartbeatStatus(n.Heartbeat.Seen)
	}
	if s.obs.Sightings != nil {
		sightings := s.obs.Sightings
		if s.createdDelegate != nil {
			sightings = failover.SawCreated(sightings, *s.createdDelegate, s.now.Time)
		}
		st.EvidenceSightings = sightingsStatus(sightings)
	}
	st.Targets = targetStatus(s.targets, s.obs.Targets)
	if d.RestartEpisode != nil {
		restartEpisode(&st, *d.RestartEpisode, now)
	}
	if taint := ownTaint(s.node, s.rem.UID); taint != nil {
		// Recorded even if the pass that added it could not patch status.
		st.AddedTaints = append(withoutTaint(st.AddedTaints, *taint), *taint)
	} else if d.RemoveOwnTaint {
		st.AddedTaints = withoutTaint(st.AddedTaints, release.OutOfServiceTaint())
	}
	if ref := s.obs.Evidence.DelegateRef; ref != nil {
		st.Delegate = ref
	}
	if d.Gate.Open && d.Phase != s3gwv1alpha1.PhaseWaitingForFencing {
		st.FencingEvidence = d.Gate.Evidence
	}
	for _, c := range failover.Conditions(s.obs, d) {
		setCondition(&st, c, s.rem.Generation, now)
	}
	if d.Phase != st.Phase {
		st.Phase, st.PhaseTransitionTime = d.Phase, &now
	}
	if d.Finished() && st.CompletionTime == nil {
		st.CompletionTime = &now
	}
	return st
}

// setCondition sets one condition, stamped with the pass's generation and
// clock (not the wall clock); its transition time moves only when its
// status does.
func setCondition(st *s3gwv1alpha1.S3GWRemediationStatus, c metav1.Condition, generation int64, now metav1.Time) {
	c.ObservedGeneration, c.LastTransitionTime = generation, now
	meta.SetStatusCondition(&st.Conditions, c)
}

// targetStatus is each target as status records it, with where its move
// stands as observed: its state, its volumes' states and, once its pod is
// gone, its replacement. Targets the pass did not observe stay as they are.
func targetStatus(targets []s3gwv1alpha1.TargetPod, observed []failover.Target) []s3gwv1alpha1.TargetPod {
	if len(targets) == 0 {
		return nil
	}
	out := make([]s3gwv1alpha1.TargetPod, 0, len(targets))
	for i, t := range targets {
		if i < len(observed) {
			t = withObserved(t, observed[i])
		}
		out = append(out, t)
	}
	return out
}

func withObserved(t s3gwv1alpha1.TargetPod, ft failover.Target) s3gwv1alpha1.TargetPod {
	t.Volumes = append([]s3gwv1alpha1.TargetVolume(nil), t.Volumes...)
	for i := range t.Volumes {
		t.Volumes[i].State = ft.Volumes[i].State()
	}
	if !ft.PodPresent {
		t.Replacement = nil
		if r := ft.Replacement; r != nil {
			t.Replacement = &s3gwv1alpha1.ReplacementPod{Name: r.Name, NodeName: r.NodeName}
		}
	}
	t.State = ft.State()
	return t
}

// ownTaint is the out-of-service taint on the node that the node's owner
// annotation says this remediation added, or nil.
func ownTaint(node *corev1.Node, uid types.UID) *corev1.Taint {
	if node == nil {
		return nil
	}
	taint := release.FindTaint(node, release.OutOfServiceTaint())
	if taint == nil || release.TaintOwner(node, *taint) != uid {
		return nil
	}
	return taint
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
	if !e.RecoveredAt.IsZero() {
		out.RecoveredAt = ptr.To(metav1.NewMicroTime(e.RecoveredAt))
	}
	if !e.RecoveredReadySince.IsZero() {
		out.ReadySince = ptr.To(metav1.NewTime(e.RecoveredReadySince))
	}
	return out
}

// restartEpisode forgets what belonged to the old failure: targets,
// evidence, conditions and times. Added taints and the delegate stay
// recorded: they are still to be cleaned up. A reported Succeeded=True
// stays too, for NHC (failover.KeepSucceeded); without a completion time it
// belongs to no episode of its own.
func restartEpisode(st *s3gwv1alpha1.S3GWRemediationStatus, e failover.Episode, now metav1.Time) {
	st.FailureEpisode = failureEpisode(e)
	var kept []metav1.Condition
	if c := meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionSucceeded); c != nil && c.Status == metav1.ConditionTrue {
		kept = []metav1.Condition{*c}
	}
	st.Targets, st.FencingEvidence, st.Conditions = nil, nil, kept
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

// patchStatus is the only status writer. It records the pass's error, skips
// no-op patches, and locks on the resourceVersion the pass read, so a pass
// that read a stale object fails with a conflict and is retried instead of
// overwriting newer status. gone: the CR left the API meanwhile.
func (r *Reconciler) patchStatus(ctx context.Context, original, rem *s3gwv1alpha1.S3GWRemediation, passErr error) (gone bool, err error) {
	if passErr != nil {
		rem.Status.LastError = passErr.Error()
	}
	if equality.Semantic.DeepEqual(original.Status, rem.Status) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Status().Patch(ctx, rem, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("patching status: %w", err)
	}
	r.own.saw(rem)
	return false, nil
}
