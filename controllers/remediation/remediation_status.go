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

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/step"
)

// statusOf is the status a step writes: its memory as step.Step left it,
// and everything else derived from that memory, what the step knew and
// decided (step.Conditions), and the node as the step's writes left it. It
// emits nothing: events, metrics and logs follow the status write (tell).
// Of the status it read, it keeps only the times it stamps (conditions'
// transition times, start and phase times) and what a step that did not
// look leaves as it was.
func statusOf(s *scope) s3gwv1alpha1.S3GWRemediationStatus {
	st, d, known := *s.rem.Status.DeepCopy(), s.decision, s.decision.State
	now := s.now // the status keeps pointers to it
	st.Memory = s.memory
	st.NodeName = s.nodeName
	st.LastError = ""
	st.ObservedGeneration = s.rem.Generation
	if st.StartTime == nil && controllerutil.ContainsFinalizer(s.rem, Finalizer) {
		st.StartTime = &now
	}
	if len(known.Targets) > 0 {
		st.Targets = targetStatus(known.Targets)
	}
	if d.RestartEpisode != nil {
		restart(&st, now)
	}
	if taint := attachments.OwnTaint(s.node, s.rem.UID); taint != nil {
		// Recorded even if the step that added it could not write status.
		st.AddedTaints = append(attachments.WithoutTaint(st.AddedTaints, *taint), *taint)
	} else if d.Does(failover.RemoveOwnTaint) {
		st.AddedTaints = attachments.WithoutTaint(st.AddedTaints, attachments.OutOfServiceTaint())
	}
	if ref := known.Evidence.DelegateRef; ref != nil {
		st.Delegate = ref
	}
	if d.Gate.Open && d.Phase != s3gwv1alpha1.PhaseWaitingForFencing {
		st.FencingEvidence = d.Gate.Evidence
	}
	for _, c := range step.Conditions(known, d) {
		setCondition(&st, c, s.rem.Generation, now)
	}
	if d.Phase != st.Phase {
		st.Phase, st.PhaseTransitionTime = d.Phase, &now
	}
	st.CompletionTime = s.memory.SucceededAt
	return st
}

// setCondition sets one condition, stamped with the step's generation and
// clock (not the wall clock); its transition time moves only when its
// status does.
func setCondition(st *s3gwv1alpha1.S3GWRemediationStatus, c metav1.Condition, generation int64, now metav1.Time) {
	c.ObservedGeneration, c.LastTransitionTime = generation, now
	meta.SetStatusCondition(&st.Conditions, c)
}

// targetStatus is each target the step looked at, with where its move
// stands: its state, its volumes' states and, once its pod is gone, its
// replacement.
func targetStatus(observed []failover.Target) []s3gwv1alpha1.TargetPod {
	out := make([]s3gwv1alpha1.TargetPod, 0, len(observed))
	for _, t := range observed {
		tp := s3gwv1alpha1.TargetPod{Namespace: t.Namespace, Name: t.Name, UID: t.UID, Owner: t.Owner.DeepCopy(), State: t.State()}
		for _, v := range t.Volumes {
			tp.Volumes = append(tp.Volumes, s3gwv1alpha1.TargetVolume{ClaimName: v.Claim, PersistentVolume: v.PersistentVolume,
				LonghornVolume: v.LonghornVolume, State: v.State(), Reason: v.SkipReason})
		}
		if r := t.Replacement; r != nil && !t.PodPresent {
			tp.Replacement = &s3gwv1alpha1.ReplacementPod{Name: r.Name, NodeName: r.NodeName}
		}
		out = append(out, tp)
	}
	return out
}

// restart forgets, for a new failure of the node, what status showed of the
// old one: targets, evidence, conditions and times. Added taints and the
// delegate stay shown: they are still to be cleaned up. A reported
// Succeeded=True stays too, for NHC (step.KeepSucceeded).
func restart(st *s3gwv1alpha1.S3GWRemediationStatus, now metav1.Time) {
	var kept []metav1.Condition
	if c := meta.FindStatusCondition(st.Conditions, s3gwv1alpha1.ConditionSucceeded); c != nil && c.Status == metav1.ConditionTrue {
		kept = []metav1.Condition{*c}
	}
	st.Targets, st.FencingEvidence, st.Conditions = nil, nil, kept
	st.StartTime = &now
}

// patchStatus is the only status writer. It records the step's error, skips
// no-op patches, and locks on the resourceVersion the step read, so a step
// that read a stale object fails with a conflict and is retried instead of
// overwriting newer status. gone: the CR left the API meanwhile.
func (r *Reconciler) patchStatus(ctx context.Context, original, rem *s3gwv1alpha1.S3GWRemediation, stepErr error) (gone bool, err error) {
	if stepErr != nil {
		rem.Status.LastError = stepErr.Error()
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
	r.own.Saw(rem)
	return false, nil
}
