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
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// Conditions derives the status conditions a step reports from what it
// knew and decided, one function per condition: the medik8s pair
// (Processing, Succeeded), Fenced, the targets' progress (WorkloadEvicted,
// AttachmentsReleased, ReplacementReady) and WorkloadSelectorValid. They are
// output only: nothing reads them back. Conditions left out keep what
// status says; the controller stamps times.
func Conditions(s failover.State, d Decision) []metav1.Condition {
	if !d.reports() {
		return nil // a reported success is kept as it was reported
	}
	conds := outcomeConditions(s, d)
	if c, ok := fenced(d); ok {
		conds = append(conds, c)
	}
	conds = append(conds, progress(s, d)...)
	if c := selectorCondition(s, d); c != nil {
		conds = append(conds, *c)
	}
	return conds
}

// reports is false for a step that keeps a reported success as it was:
// it reports nothing anew.
func (d Decision) reports() bool { return d.Reason != "" }

// outcomeConditions is the medik8s pair: Processing while the remediation
// works, then Succeeded True or False once its phase is final. A success
// already reported is kept while a later failure of the node is worked on
// (KeepSucceeded).
func outcomeConditions(s failover.State, d Decision) []metav1.Condition {
	processing, succeeded := metav1.ConditionTrue, metav1.ConditionUnknown
	switch d.Phase {
	case s3gwv1alpha1.PhaseSucceeded:
		processing, succeeded = metav1.ConditionFalse, metav1.ConditionTrue
	case s3gwv1alpha1.PhaseFailed, s3gwv1alpha1.PhaseStopped:
		processing, succeeded = metav1.ConditionFalse, metav1.ConditionFalse
	case s3gwv1alpha1.PhaseExcluded:
		processing = metav1.ConditionFalse
	}
	outcome := condition(s3gwv1alpha1.ConditionSucceeded, succeeded, d.Reason, d.Message)
	if succeeded == metav1.ConditionUnknown && KeepSucceeded(s) {
		outcome = condition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionTrue, s3gwv1alpha1.ReasonNodeFailedAgain,
			"Kept from the node's earlier failure, so NodeHealthCheck does not time out this one; Processing says how far it got")
	}
	return []metav1.Condition{
		condition(s3gwv1alpha1.ConditionProcessing, processing, d.Reason, d.Message),
		outcome,
	}
}

// KeepSucceeded reports whether Succeeded=True, once reported, stays True
// while a later failure of the node under the same CR is worked on (NHC
// keeps the CR for healthyDelay). NHC reads only Succeeded, and only to
// decide whether to time the CR out: on an overdue node lease (acquireTime
// plus three times the remediation timeout, 30 minutes in single-template
// mode, counted from the first failure) and on the escalation step's
// timeout (counted from the CR's creation), it adds nhc-timed-out unless
// Succeeded is True (node-healthcheck-operator,
// internal/controller/nodehealthcheck_controller.go, remediate;
// internal/controller/resources/lease.go, ManageLease and isLeaseOverdue).
// Both have run out long before a second failure under a kept CR, so a
// Succeeded taken back to Unknown is timed out within one NHC pass and the
// new failure is never handled. Kept True, NHC leaves the CR alone (and in
// escalation mode moves on to its next step, whose fencer the remediation
// can use); a later failure that fails still reports False, and a finished
// one True again.
func KeepSucceeded(s failover.State) bool { return s.SuccessReported }

// fenced reports the gate from the stage that judged it: False with what
// blocks it, True once the step acts on it; nothing before (ok false).
func fenced(d Decision) (c metav1.Condition, ok bool) {
	if b := d.block(s3gwv1alpha1.ConditionFenced); b != nil {
		return condition(b.Condition, metav1.ConditionFalse, b.Reason, b.Message), true
	}
	if d.Stage != StageStorage && d.Stage != StageRelease {
		return metav1.Condition{}, false
	}
	c = condition(s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingEvidence,
		"Fenced by "+strings.Join(d.Gate.Evidence, ", "))
	if d.Gate.Disabled {
		c.Reason, c.Message = s3gwv1alpha1.ReasonFencingDisabled, "fencing.mode is Disabled: acting without fencing evidence (unsafe)"
	}
	return c, true
}

// progress reports the observed facts of each step of the move, once the
// step looked at the recorded targets, with what blocks a step in place of
// its fact.
func progress(s failover.State, d Decision) []metav1.Condition {
	if d.Stage == StageStart || len(s.Targets) == 0 {
		return nil
	}
	var present, attached, waiting []string
	for _, t := range s.Targets {
		if t.PodPresent {
			present = append(present, t.DisplayName())
		}
		if t.Replacement == nil {
			waiting = append(waiting, t.DisplayName())
		}
		for _, v := range t.Volumes {
			if v.ToRelease() {
				attached = append(attached, v.LonghornVolume)
			}
		}
	}
	conds := []metav1.Condition{
		factCondition(s3gwv1alpha1.ConditionWorkloadEvicted, present, s3gwv1alpha1.ReasonEvicted,
			"No target pod is left in the API", s3gwv1alpha1.ReasonEvicting, "Pods still on the node: "),
		factCondition(s3gwv1alpha1.ConditionAttachmentsReleased, attached, s3gwv1alpha1.ReasonReleased,
			"No target volume is attached to the failed node", s3gwv1alpha1.ReasonReleasing, "Still attached to the failed node: "),
		factCondition(s3gwv1alpha1.ConditionReplacementReady, waiting, s3gwv1alpha1.ReasonReplacementReady,
			"Every target has a Ready replacement on another node", s3gwv1alpha1.ReasonWaitingForReplacement, "No Ready replacement yet for: "),
	}
	for i := range conds {
		if b := d.block(conds[i].Type); b != nil {
			conds[i] = condition(b.Condition, metav1.ConditionFalse, b.Reason, b.Message)
		}
	}
	return conds
}

func factCondition(condType string, pending []string, doneReason, doneMsg, pendingReason, pendingPrefix string) metav1.Condition {
	if len(pending) == 0 {
		return condition(condType, metav1.ConditionTrue, doneReason, doneMsg)
	}
	return condition(condType, metav1.ConditionFalse, pendingReason, pendingPrefix+strings.Join(pending, ", "))
}

// selectorCondition reports, for a step that looked for targets with the
// selector on a node not Ready, whether the selector parses, and the pods
// on the node it matches that the controller refuses to touch.
func selectorCondition(s failover.State, d Decision) *metav1.Condition {
	if s.Node == nil || s.Node.Ready || s.TimedOut || s.Node.Excluded || d.RestartEpisode != nil {
		return nil
	}
	var c metav1.Condition
	switch {
	case s.SelectorError != "":
		c = condition(s3gwv1alpha1.ConditionWorkloadSelectorValid, metav1.ConditionFalse,
			s3gwv1alpha1.ReasonInvalidWorkloadSelector, s.SelectorError)
	case len(s.RefusedPods) > 0:
		c = condition(s3gwv1alpha1.ConditionWorkloadSelectorValid, metav1.ConditionFalse,
			s3gwv1alpha1.ReasonSelectsProtectedPods, "The workload selector matches pods that are never touched, left alone: "+
				strings.Join(s.RefusedPods, ", "))
	default:
		c = condition(s3gwv1alpha1.ConditionWorkloadSelectorValid, metav1.ConditionTrue,
			s3gwv1alpha1.ReasonWorkloadSelectorValid, "The workload selector matches only pods that may be moved")
	}
	return &c
}

func condition(condType string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message}
}
