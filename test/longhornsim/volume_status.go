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

package longhornsim

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// Engine and replica process states.
const (
	instanceRunning  = "running"
	instanceStarting = "starting"
	instanceStopped  = "stopped"
	instanceUnknown  = "unknown"
)

// Volume robustness values.
const (
	robustnessHealthy = "healthy"
	robustnessUnknown = "unknown"
)

// engineNodeDown reports whether the node running (or last running) the
// engine is down as far as Longhorn knows.
func engineNodeDown(a attachment, view clusterView) bool {
	return a.engineNodeID != "" && view.down(a.engineNodeID)
}

// volumeRobustness is unknown while the engine's node is down and healthy
// otherwise. (Degraded and faulted volumes are not simulated.)
func volumeRobustness(a attachment, view clusterView) string {
	if engineNodeDown(a, view) {
		return robustnessUnknown
	}
	return robustnessHealthy
}

// setEngine makes the Engine match the attachment: it runs on the attached
// node, is unknown while that node is down, and stops on detach. Its
// replica mode map lists the replicas on nodes Longhorn can reach, frozen
// while the engine's own node is down.
func setEngine(e *longhorn.Engine, a attachment, replicas []longhorn.Replica, view clusterView) {
	e.Spec.NodeID = a.engineNodeID
	switch a.state {
	case stateAttaching, stateAttached:
		e.Spec.DesireState = instanceRunning
	default:
		e.Spec.DesireState = instanceStopped
	}

	switch {
	case a.engineNodeID == "":
		e.Status.CurrentState = instanceStopped
		e.Status.ReplicaModeMap = nil
	case view.down(a.engineNodeID):
		e.Status.CurrentState = instanceUnknown
	case !view.reachable(a.engineNodeID):
		// Down but not yet detected: Longhorn still shows the last state.
	case a.state == stateAttaching:
		e.Status.CurrentState = instanceStarting
	case a.state == stateAttached:
		e.Status.CurrentState = instanceRunning
		e.Status.ReplicaModeMap = map[string]string{}
		for _, r := range replicas {
			if r.Spec.FailedAt == "" && !view.down(r.Spec.NodeID) {
				e.Status.ReplicaModeMap[r.Name] = "RW"
			}
		}
	}
}

// replicaState is the replica's recorded status.currentState after a pass
// that leaves the volume at a. A replica should run while the volume has an
// engine (a.engineNodeID set) and stop once that engine has stopped
// (controller/volume_controller.go closeVolumeDependentResources). What gets
// recorded follows controller/instance_handler.go ReconcileInstanceState and
// syncStatusWithInstanceManager:
//   - on a node Longhorn counts down, the instance manager is unknown and
//     nobody asks it: a replica that should run is unknown, one that should
//     stop is recorded stopped (status.started is false);
//   - on a node lost but not yet counted down, its own longhorn-manager
//     still owns the replica (controller/controller_manager.go
//     isControllerResponsibleFor) and cannot write: the old state stays;
//   - otherwise the instance manager runs or deletes the process at once.
func replicaState(r longhorn.Replica, a attachment, view clusterView) string {
	shouldRun := a.engineNodeID != ""
	switch {
	case view.down(r.Spec.NodeID):
		if shouldRun {
			return instanceUnknown
		}
		return instanceStopped
	case !view.reachable(r.Spec.NodeID):
		return r.Status.CurrentState
	case shouldRun:
		return instanceRunning
	default:
		return instanceStopped
	}
}

// ticketStatuses says for each ticket whether it is satisfied, with the
// message Longhorn shows when it is not.
func ticketStatuses(tickets map[string]*longhorn.AttachmentTicket, a attachment, view clusterView,
	old map[string]*longhorn.AttachmentTicketStatus, now metav1.Time) map[string]*longhorn.AttachmentTicketStatus {
	if len(tickets) == 0 {
		return nil
	}
	statuses := make(map[string]*longhorn.AttachmentTicketStatus, len(tickets))
	for id, t := range tickets {
		if t == nil {
			continue
		}
		satisfied := a.state == stateAttached && a.currentNodeID == t.NodeID
		cond := longhorn.Condition{Type: "Satisfied", Status: "True"}
		if !satisfied {
			cond.Status = "False"
			cond.Message = ticketWaitReason(t, a, view)
		}
		cond.LastTransitionTime = now
		if prev, ok := old[id]; ok {
			if c := condition(prev.Conditions, "Satisfied"); c != nil && c.Status == cond.Status {
				cond.LastTransitionTime = c.LastTransitionTime
			}
		}
		statuses[id] = &longhorn.AttachmentTicketStatus{
			ID: id, Satisfied: satisfied, Conditions: []longhorn.Condition{cond}, Generation: t.Generation,
		}
	}
	return statuses
}

func ticketWaitReason(t *longhorn.AttachmentTicket, a attachment, view clusterView) string {
	switch {
	case a.currentNodeID != "" && a.currentNodeID != t.NodeID:
		return fmt.Sprintf("the volume is currently attached to different node %s", a.currentNodeID)
	case a.nodeID != "" && a.nodeID != t.NodeID:
		return fmt.Sprintf("the volume is currently attaching to different node %s", a.nodeID)
	case a.state == stateDetaching:
		return "waiting for the volume to fully detach"
	case !view.ready(t.NodeID):
		return fmt.Sprintf("node %s is not ready", t.NodeID)
	default:
		return "waiting for the engine to start"
	}
}
