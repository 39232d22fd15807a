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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Wait says what a pass waits for; the controller maps it to a requeue
// interval, so polling rates are configured in one place.
type Wait int

// Things a pass can wait for.
const (
	// WaitNone: nothing to wait for (finished, stopped, or node not found).
	WaitNone Wait = iota
	// WaitForStatus: status was just recorded and must persist first.
	WaitForStatus
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

// Decision is what one pass does: writes (in order: delegate, evict, then
// release) and the resulting status.
type Decision struct {
	Phase s3gwv1alpha1.Phase
	Gate  Gate
	// RecordEpisode: persist the node failure the remediation works on, so
	// a later failure of the same node is recognised as a new one.
	RecordEpisode *Episode
	// RestartEpisode: the node failed again after a recovery; start over
	// for this episode (forget targets, evidence and outcome of the old one).
	RestartEpisode *Episode
	// RecordTargets: persist newly found targets before anything is deleted.
	RecordTargets bool
	// CreateDelegate creates the fencing CR from spec.fencing.delegate. It
	// fences (e.g. power-cycles) the node, so it too is only decided for a
	// node that is not Ready and runs recorded targets.
	CreateDelegate bool
	// DeleteDelegate deletes the delegate CR whose success belongs to an
	// earlier failure, so that a new one is created for this failure.
	DeleteDelegate bool
	// TimeOutDelegate copies NHC's timed-out annotation onto the delegate CR.
	TimeOutDelegate bool
	// Evict lists the pods to force-delete.
	Evict []Target
	// Release is what the spec's release strategy writes this pass.
	Release ReleasePlan
	// Conditions to set on status (times are filled in by the controller).
	Conditions []metav1.Condition
	// Wait says what the pass waits for.
	Wait Wait
	// WakeAt is when the decision changes by itself, with nothing to
	// announce it (a Lease expiring, a deadline passing); zero if never.
	WakeAt time.Time
}

// Destructive reports whether the decision deletes or releases anything.
func (d Decision) Destructive() bool {
	return len(d.Evict) > 0 || d.Release.Writes()
}

// Condition returns the decision's condition of the type, or nil.
func (d Decision) Condition(condType string) *metav1.Condition {
	for i := range d.Conditions {
		if d.Conditions[i].Type == condType {
			return &d.Conditions[i]
		}
	}
	return nil
}

// Finished reports whether the remediation reached Succeeded=True.
func (d Decision) Finished() bool {
	c := d.Condition(s3gwv1alpha1.ConditionSucceeded)
	return c != nil && c.Status == metav1.ConditionTrue
}

func condition(condType string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message}
}

// processing reports the medik8s pair for a remediation still at work.
func processing(reason, message string) []metav1.Condition {
	return []metav1.Condition{
		condition(s3gwv1alpha1.ConditionProcessing, metav1.ConditionTrue, reason, message),
		condition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, reason, message),
	}
}

// finished reports the medik8s pair for a remediation that ended.
func finished(succeeded bool, reason, message string) []metav1.Condition {
	status := metav1.ConditionFalse
	if succeeded {
		status = metav1.ConditionTrue
	}
	return []metav1.Condition{
		condition(s3gwv1alpha1.ConditionProcessing, metav1.ConditionFalse, reason, message),
		condition(s3gwv1alpha1.ConditionSucceeded, status, reason, message),
	}
}
