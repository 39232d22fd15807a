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
	"sort"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// Longhorn volume states (volume.status.state) the simulator uses.
const (
	stateDetached  = "detached"
	stateAttaching = "attaching"
	stateAttached  = "attached"
	stateDetaching = "detaching"
)

// attachment is where a volume is in Longhorn's attach/detach state
// machine: spec.nodeID, status.state and status.currentNodeID, plus the
// node the engine was started on (engine spec.nodeID).
type attachment struct {
	nodeID        string
	state         string
	currentNodeID string
	engineNodeID  string
}

func (a attachment) String() string {
	return fmt.Sprintf("%s (spec.nodeID %q, currentNodeID %q, engine on %q)", a.state, a.nodeID, a.currentNodeID, a.engineNodeID)
}

// clusterView answers what Longhorn knows about nodes.
type clusterView struct {
	// ready: the Longhorn Node is Ready=True, so Longhorn attaches there.
	ready func(node string) bool
	// down: Longhorn considers the node down (IsNodeDownOrDeleted), so it
	// records engines there as stopped without asking.
	down func(node string) bool
	// reachable: the node's instance manager answers, so engines there
	// really start and stop.
	reachable func(node string) bool
}

// attachStep is the outcome of one pass of the state machine.
type attachStep struct {
	next attachment
	// startedAttaching is set when this pass began attaching.
	startedAttaching bool
	// waitFor is set while an attach completes by itself after a delay.
	waitFor time.Duration
}

// replicaRecord is what the attach state machine needs of a replica: its
// node and its recorded status.currentState.
type replicaRecord struct {
	node  string
	state string
}

// stepAttachment advances a volume's attachment by one pass, following
// longhorn-manager's volume attachment and volume controllers:
//
//  1. A volume whose node no ticket asks for any more is detached.
//  2. The engine stops first, the replicas only after it
//     (controller/volume_controller.go closeVolumeDependentResources); a
//     process is recorded stopped at once when its instance manager answers
//     or Longhorn sees its node down (instanceCanStop). The engine's node
//     is forgotten (engineNodeID "") once it has stopped.
//  3. The volume is detached once the engine and every replica are recorded
//     stopped (verifyVolumeDependentResourcesClosed); until then it hangs in
//     "detaching", e.g. while a node is lost but not yet declared down.
//  4. Only a fully detached volume attaches, to the highest-priority ticket,
//     and only to a Ready Longhorn node.
//  5. An attach completes attachDelay after it began, once the engine can
//     run there.
func stepAttachment(cur attachment, tickets map[string]*longhorn.AttachmentTicket, replicas []replicaRecord,
	view clusterView, attachingFor, attachDelay time.Duration) attachStep {
	next := cur
	step := attachStep{}

	if next.nodeID != "" && !ticketWantsNode(tickets, next.nodeID) {
		next.nodeID = ""
		if next.state != stateDetached {
			next.state = stateDetaching
		}
	}

	if next.nodeID == "" && next.state != stateDetached {
		if next.engineNodeID != "" && instanceCanStop(next.engineNodeID, view) {
			next.engineNodeID = ""
		}
		if next.engineNodeID == "" && replicasCanStop(replicas, view) {
			next.state, next.currentNodeID = stateDetached, ""
		} else {
			next.state = stateDetaching
		}
	}

	if next.nodeID == "" && next.state == stateDetached {
		if t := pickTicket(tickets); t != nil && view.ready(t.NodeID) {
			next.nodeID, next.state, next.engineNodeID = t.NodeID, stateAttaching, t.NodeID
			step.startedAttaching = true
			attachingFor = 0
		}
	}

	if next.state == stateAttaching && view.reachable(next.nodeID) {
		if attachingFor >= attachDelay {
			next.state, next.currentNodeID = stateAttached, next.nodeID
		} else {
			step.waitFor = attachDelay - attachingFor
		}
	}

	step.next = next
	return step
}

// instanceCanStop: an engine or replica process on node is recorded
// stopped as soon as it should stop. Either its instance manager answers
// and deletes the process, or Longhorn counts the node down and records it
// stopped without asking (controller/instance_handler.go
// ReconcileInstanceState, syncStatusWithInstanceManager). A node that is
// lost but not yet counted down still owns its processes
// (controller/controller_manager.go isControllerResponsibleFor), and its
// manager cannot write, so nothing is recorded.
func instanceCanStop(node string, view clusterView) bool {
	return node == "" || view.reachable(node) || view.down(node)
}

// replicasCanStop: every replica is recorded stopped already or can be now.
func replicasCanStop(replicas []replicaRecord, view clusterView) bool {
	for _, r := range replicas {
		if r.state != instanceStopped && r.state != "" && !instanceCanStop(r.node, view) {
			return false
		}
	}
	return true
}

func ticketWantsNode(tickets map[string]*longhorn.AttachmentTicket, node string) bool {
	for _, t := range tickets {
		if t != nil && t.NodeID == node {
			return true
		}
	}
	return false
}

// ticketPriority is Longhorn's attacher-type priority; unknown types rank
// lowest.
var ticketPriority = map[string]int{
	"volume-restore-controller":    2000,
	"volume-expansion-controller":  2000,
	"longhorn-api":                 1000,
	longhorn.TicketTypeCSIAttacher: 900,
	"salvage-controller":           900,
	"share-manager-controller":     900,
}

// pickTicket chooses the ticket Longhorn attaches for: highest priority,
// then the lexicographically smallest ID.
func pickTicket(tickets map[string]*longhorn.AttachmentTicket) *longhorn.AttachmentTicket {
	ids := make([]string, 0, len(tickets))
	for id, t := range tickets {
		if t != nil && t.NodeID != "" {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		pi, pj := ticketPriority[tickets[ids[i]].Type], ticketPriority[tickets[ids[j]].Type]
		if pi != pj {
			return pi > pj
		}
		return ids[i] < ids[j]
	})
	if len(ids) == 0 {
		return nil
	}
	return tickets[ids[0]]
}
