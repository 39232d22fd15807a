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

package release

import (
	"fmt"
	"slices"
	"strings"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// The release in two steps (docs/design/replica-stop-confirmation.md): the
// volume is detached in Longhorn first (the failed node's csi-attacher
// ticket removed) while the pod and the Kubernetes VolumeAttachment keep
// the replacement off; the force delete and the Kubernetes release follow
// once each replica's own instance manager shows it stopped, since a node
// that lost the control plane a moment ago looks reachable and would never
// stop its replica.

// liveProcess is true for the process states of a replica that may still
// write: every state but stopped, error and terminated (v1beta2
// InstanceState; unknown counts as live).
func liveProcess(state string) bool {
	return state != "stopped" && state != "error" && state != "terminated"
}

// confirmStopped reports whether replica r's process is proven gone by its
// node's own instance managers, and otherwise what they show. Only a
// running instance manager's list comes from the process itself
// (longhorn-manager controller/instance_manager_controller.go
// InstanceManagerMonitor.updateInstanceMap); another state blanks the list
// (syncInstanceStatus), and unknown (syncStatusWithNode: Longhorn counts
// the node down) keeps the last one, which nobody can verify. A node that is
// fenced itself wrote its record before the fence: it confirms nothing.
func confirmStopped(r failover.Replica) (bool, string) {
	if fence := r.Host.Fence(); fence != "" {
		return false, fmt.Sprintf("%s is fenced by %s: its instance managers' record of replica %s predates the fence", r.Node, fence, r.Name)
	}
	running := false
	for _, im := range r.Host.InstanceManagers {
		switch im.State {
		case longhorn.InstanceManagerRunning:
			if state, listed := im.Replicas[r.Name]; listed && liveProcess(state) {
				return false, fmt.Sprintf("instance manager %s on %s still lists replica %s %s", im.Name, r.Node, r.Name, state)
			}
			running = true
		case longhorn.InstanceManagerUnknown, "":
			return false, fmt.Sprintf("instance manager %s on %s is %s: whether replica %s still runs is unknown",
				im.Name, r.Node, stateOrUnset(im.State), r.Name)
		}
	}
	if !running {
		return false, fmt.Sprintf("no running instance manager on %s confirms replica %s stopped", r.Node, r.Name)
	}
	return true, ""
}

func stateOrUnset(s string) string {
	if s == "" {
		return "without state"
	}
	return s
}

// unconfirmedStops lists, for a volume whose failed node's tickets are
// gone, the replicas on other nodes not yet proven stopped. A replica on
// the failed node is the gate's: the evidence proves that node unable to
// write.
func unconfirmedStops(v failover.Volume, failedNode string) []string {
	var out []string
	for _, r := range v.Replicas {
		if r.Node == "" || r.Node == failedNode {
			continue
		}
		if ok, why := confirmStopped(r); !ok {
			out = append(out, why)
		}
	}
	return out
}

// fencerAtWork names, when the gate rests on storage isolation alone, a
// fencer's CR for the node that has neither fenced nor given up: empty
// otherwise. Isolation fences by the detach itself, and a replica node cut
// off in the second before its stop would keep the old engine's writes
// from the engine Longhorn starts when the fencer releases the volume
// itself (FAR, SNR): while a fencer is at work, the detach waits for it.
func fencerAtWork(o failover.State, gate evidence.Gate) string {
	if gate.ProvesShutdown || !slices.Equal(gate.Evidence, []string{evidence.EvidenceStorageIsolation}) {
		return ""
	}
	crs := o.Evidence.Remediators
	if o.Evidence.Delegate != nil {
		crs = append(slices.Clip(crs), *o.Evidence.Delegate)
	}
	for _, cr := range crs {
		if !cr.Fenced && !cr.Succeeded && cr.Failure == "" {
			return cr.Kind + " " + cr.Name
		}
	}
	return ""
}

// stopsUnconfirmedAfterDetach names the replicas of target volumes already
// detached in Longhorn whose stops are not yet confirmed: such a replica
// may alone have the old engine's last writes (FencerHold).
func stopsUnconfirmedAfterDetach(o failover.State) []string {
	var out []string
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if v.ToRelease() && len(csiTickets(v)) == 0 {
				out = append(out, unconfirmedStops(v, o.Node.Name)...)
			}
		}
	}
	return out
}

// csiTickets are the volume's csi-attacher tickets for the failed node:
// the ones the first step removes. Any other ticket there is Longhorn's
// or an admin's, and keeps the volume attached (named at the deadline).
func csiTickets(v failover.Volume) []failover.Ticket {
	var out []failover.Ticket
	for _, t := range v.Tickets {
		if t.Type == longhorn.TicketTypeCSIAttacher {
			out = append(out, t)
		}
	}
	return out
}

// TicketIDs are the IDs of the csi-attacher tickets to remove.
func TicketIDs(v failover.Volume) []string {
	ids := make([]string, 0, len(v.Tickets))
	for _, t := range csiTickets(v) {
		ids = append(ids, t.ID)
	}
	slices.Sort(ids)
	return ids
}

// confirmsReplicaStops is true when a release waits for the replicas'
// stops: whenever it waits for reachable replicas at all
// (release.requireReachableReplicas, the default) and fencing is on. An
// admin who turned either off accepted losing what a stray replica has.
func confirmsReplicaStops(o failover.State, gate evidence.Gate) bool {
	return !gate.Disabled && o.Spec.Release.RequireReachableReplicasOrDefault()
}

// replicaStopHolders names, for the deadline's message, what the stops of
// v's replicas wait for; empty when nothing does.
func replicaStopHolders(o failover.State, v failover.Volume) string {
	if len(csiTickets(v)) > 0 || len(v.Tickets) > 0 || !o.Spec.Release.RequireReachableReplicasOrDefault() {
		return ""
	}
	if waiting := unconfirmedStops(v, o.Node.Name); len(waiting) > 0 {
		return "unconfirmed replica stops (" + strings.Join(waiting, "; ") + ")"
	}
	return ""
}
