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

package far

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reason is FAR's ConditionsChangeReason (pkg/utils/conditions.go).
type Reason string

// The reasons, each with the conditions it sets.
const (
	// NodeNotFound, InterruptedByNHC, AgentFailed and AgentTimedOut set all
	// three conditions False.
	NodeNotFound     Reason = "RemediationFinishedNodeNotFound"
	InterruptedByNHC Reason = "RemediationInterruptedByNHC"
	AgentFailed      Reason = "FenceAgentFailed"
	AgentTimedOut    Reason = "FenceAgentTimedOut"
	// Started: Processing True, the other two Unknown.
	Started Reason = "RemediationStarted"
	// AgentSucceeded: FenceAgentActionSucceeded True; nothing else changes.
	AgentSucceeded Reason = "FenceAgentSucceeded"
	// FinishedSuccessfully: Processing False, Succeeded True.
	FinishedSuccessfully Reason = "RemediationFinishedSuccessfully"
)

var reasonMessages = map[Reason]string{
	NodeNotFound:         "FAR CR name doesn't match a node name",
	InterruptedByNHC:     "Node Healthcheck timeout annotation has been set. Remediation has stopped",
	AgentFailed:          "Fence agent command has failed",
	AgentTimedOut:        "Time out occurred while executing the Fence agent command",
	Started:              "FAR CR was found, its name matches one of the cluster nodes, and a finalizer was set to the CR",
	AgentSucceeded:       "FAR taint was added and the fence agent command has been created and executed successfully",
	FinishedSuccessfully: "The unhealthy node was fully remediated (it was tainted, fenced using the fence agent and all the node resources have been deleted)",
}

// updateConditions is UpdateConditions: it sets the reason's conditions,
// each only if its status changes, and stamps lastUpdateTime when one did.
func updateConditions(status *Status, reason Reason, now metav1.Time) {
	var processing, fenced, succeeded metav1.ConditionStatus
	switch reason {
	case NodeNotFound, InterruptedByNHC, AgentFailed, AgentTimedOut:
		processing, fenced, succeeded = metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse
	case Started:
		processing, fenced, succeeded = metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown
	case AgentSucceeded:
		fenced = metav1.ConditionTrue
	case FinishedSuccessfully:
		processing, succeeded = metav1.ConditionFalse, metav1.ConditionTrue
	default:
		return
	}
	changed := false
	for _, c := range []struct {
		condType string
		status   metav1.ConditionStatus
	}{{ProcessingType, processing}, {FenceAgentActionSucceededType, fenced}, {SucceededType, succeeded}} {
		if c.status == "" || meta.IsStatusConditionPresentAndEqual(status.Conditions, c.condType, c.status) {
			continue
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: c.condType, Status: c.status,
			Reason: string(reason), Message: reasonMessages[reason], LastTransitionTime: now})
		changed = true
	}
	if changed {
		status.LastUpdateTime = &now
	}
}
