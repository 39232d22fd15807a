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

// Step is how far Decide got; the conditions a pass reports follow from it
// (Conditions).
type Step int

// The steps of Decide, in order.
const (
	// StepStart: the pass ends before the move: a new failure, a reported
	// success kept, no node, NHC's timeout, the selector, the targets.
	StepStart Step = iota
	// StepNodeReady: the node is Ready.
	StepNodeReady
	// StepVolumeRules: a target volume's own settings refuse any release,
	// whatever the evidence (VolumeRules).
	StepVolumeRules
	// StepFencing: the gate is closed, or the release strategy lacks the
	// proof of shutdown it needs.
	StepFencing
	// StepStorage: Longhorn or a healthy, reachable replica is missing.
	StepStorage
	// StepRelease: evicting, releasing, or waiting for the replacement.
	StepRelease
	// StepReplacement: released; the replacement is Ready, or late.
	StepReplacement
)

// Hold is a condition a step reports False, and why: the node Ready or the
// gate closed (Fenced), a live kubelet (AttachmentsReleased), finalizers
// (WorkloadEvicted).
type Hold struct {
	Condition, Reason, Message string
}

// Decision is what one pass does: writes (in order: delegate, evict, then
// release), what it waits for, and why it stands where it does.
type Decision struct {
	Phase s3gwv1alpha1.Phase
	// Step is how far the decision got.
	Step Step
	// Reason and Message say why the pass stands where it does: the
	// reason and message of Processing and Succeeded. Both are empty when
	// a reported success is kept: nothing is reported anew.
	Reason, Message string
	// Holds are what holds a step beyond what the targets' facts show.
	Holds []Hold
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
	// TimeOutDelegate copies NHC's timed-out annotation onto the delegate
	// CR, unless it succeeded (RemediatorCR.MayTimeOut); the adapter checks
	// that again on the CR it patches.
	TimeOutDelegate bool
	// RemoveOwnTaint removes the out-of-service taint this remediation
	// added, its work done (OwnTaintDone).
	RemoveOwnTaint bool
	// Evict lists the pods to force-delete.
	Evict []Target
	// Release is what the spec's release strategy writes this pass.
	Release ReleasePlan
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

// Finished reports whether the pass reports Succeeded=True.
func (d Decision) Finished() bool {
	return d.Phase == s3gwv1alpha1.PhaseSucceeded && d.Reason != ""
}
