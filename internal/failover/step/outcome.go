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
	"fmt"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// replacementOutcome ends the remediation once every attachment is released
// and every target has a Ready replacement elsewhere, or reports
// ReplacementNotReady once the replacement timeout has passed since release.
func replacementOutcome(o failover.State) (bool, Decision) {
	if !failover.MovedOff(o.Targets) {
		return false, Decision{}
	}
	if failover.AllReplaced(o.Targets) {
		return true, Decision{
			Phase: s3gwv1alpha1.PhaseSucceeded, Stage: StageReplacement,
			Reason:  s3gwv1alpha1.ReasonRemediationFinished,
			Message: fmt.Sprintf("s3gw runs again on another node; node %s holds no s3gw attachment", o.Node.Name),
		}
	}
	timeout := o.Spec.ReplacementTimeoutOrDefault()
	if o.ReleasedSince != nil && o.Now.Sub(*o.ReleasedSince) > timeout {
		return true, Decision{
			Phase: s3gwv1alpha1.PhaseFailed, Stage: StageReplacement,
			Reason:  s3gwv1alpha1.ReasonReplacementNotReady,
			Message: fmt.Sprintf("No Ready replacement %s after the attachments were released", timeout),
			Wait:    WaitAfterFailure,
		}
	}
	return false, Decision{}
}

// awaitingReplacement waits for the replacements of targets moved off the
// node: every pod gone, every volume released. Fenced is left as the step
// that acted on it reported it.
func awaitingReplacement(o failover.State) Decision {
	return Decision{
		Phase: s3gwv1alpha1.PhaseWaitingForReplacement, Stage: StageReplacement,
		Reason:  s3gwv1alpha1.ReasonRemediationStarted,
		Message: movingMessage(o, s3gwv1alpha1.PhaseWaitingForReplacement),
		Wait:    WaitForReplacement,
	}
}

// movingMessage is the message of a step that moves s3gw off the node, or
// waits for its replacement, with nothing blocking it.
func movingMessage(o failover.State, phase s3gwv1alpha1.Phase) string {
	return fmt.Sprintf("Moving s3gw off node %s (%s)", o.Node.Name, phase)
}
