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
	"strings"

	"k8s.io/apimachinery/pkg/types"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
)

// Move is what moving the targets off the node takes this step, once the
// gate is open: the phase it stands in, its writes in order, and what blocks
// a step of it.
type Move struct {
	Phase   s3gwv1alpha1.Phase
	Actions []failover.Action
	// Blocks say what blocks a step; the last is the most specific.
	Blocks []failover.Block
}

// Plan orders the writes of an open gate: force-delete the pods still
// present, then release the volumes of the pods gone from the API by the
// configured strategy. While a target's pod is in the API, even kept there
// by a finalizer, the attach-detach controller still wants its volume on the
// node, so nothing of it is released.
//
// A force-delete is itself a deferred release: once the pod is gone, the
// attach-detach controller force-detaches its volume from an unhealthy node
// after 6 minutes, whatever the evidence says by then. So a pod is
// force-deleted only when its volumes can be released right after, while
// the evidence just checked still proves the node fenced: with the release
// in two steps, once Longhorn detached them and every replica is proven
// stopped. The pod in the API is the block that cannot time out while a
// replica's stop waits for its node.
func Plan(o failover.State, gate evidence.Gate) Move {
	plan := planRelease(o, gate)
	var m Move
	var finalized []string
	for _, t := range o.Targets {
		switch {
		case !t.PodPresent || t.ForceDeleted || waitsForKubelet(o, t):
		case keptByFinalizers(gate, t):
			finalized = append(finalized, fmt.Sprintf("%s (%s)", t.DisplayName(), strings.Join(t.Finalizers, ", ")))
		case plan.unstopped[t.UID]:
			// Longhorn first: its ticket goes, its replicas' stops are awaited.
		default:
			m.Actions = append(m.Actions, failover.Action{Kind: failover.Evict, Target: &t})
		}
	}
	if len(plan.tickets) > 0 {
		m.Actions = append(m.Actions, failover.Action{Kind: failover.DetachInLonghorn, Volumes: plan.tickets})
	}
	if plan.node || len(plan.volumes) > 0 {
		m.Actions = append(m.Actions, failover.Action{Kind: failover.Release, Strategy: plan.strategy,
			Volumes: plan.volumes, Node: plan.node})
	}

	switch {
	case plan.podsPresent:
		m.Phase = s3gwv1alpha1.PhaseEvicting
	case plan.pending:
		m.Phase = s3gwv1alpha1.PhaseReleasing
	default:
		m.Phase = s3gwv1alpha1.PhaseWaitingForReplacement
	}
	if plan.waitingForKubelet {
		m.Blocks = append(m.Blocks, failover.Block{Condition: s3gwv1alpha1.ConditionAttachmentsReleased, Reason: s3gwv1alpha1.ReasonKubeletAlive,
			Message: fmt.Sprintf("Waiting for node %s's kubelet to be lost: ControllerDetach edits only a dead kubelet's volumesInUse",
				o.Node.Name)})
	}
	if plan.waitsForFencer {
		m.Blocks = append(m.Blocks, failover.Block{Condition: s3gwv1alpha1.ConditionWorkloadEvicted, Reason: s3gwv1alpha1.ReasonFencerAtWork,
			Message: fmt.Sprintf("Storage isolation proves node %s fenced, but %s is still fencing it: Longhorn's ticket stays until it is done",
				o.Node.Name, plan.fencerAtWork)})
	}
	if len(plan.unconfirmed) > 0 {
		// The pods wait for it, or, already gone, their release does.
		blocked := s3gwv1alpha1.ConditionAttachmentsReleased
		if len(plan.unstopped) > 0 {
			blocked = s3gwv1alpha1.ConditionWorkloadEvicted
		}
		m.Blocks = append(m.Blocks, failover.Block{Condition: blocked, Reason: s3gwv1alpha1.ReasonReplicaStopUnconfirmed,
			Message: fmt.Sprintf("Longhorn detached the volumes from node %s; waiting for each replica's stop: %s",
				o.Node.Name, strings.Join(plan.unconfirmed, "; "))})
	}
	if len(finalized) > 0 {
		m.Blocks = append(m.Blocks, failover.Block{Condition: s3gwv1alpha1.ConditionWorkloadEvicted, Reason: s3gwv1alpha1.ReasonPodFinalizers,
			Message: "Not force-deleting pods finalizers would keep in the API: " + strings.Join(finalized, "; ") +
				"; remove the finalizers or add a fencer"})
	}
	return m
}

// releasePlan is what releasing the targets' volumes takes this step.
type releasePlan struct {
	// pending: a volume is still attached to the node.
	pending bool
	// podsPresent: a target pod is still in the API.
	podsPresent bool
	// waitingForKubelet: the strategy waits for a live kubelet.
	waitingForKubelet bool
	// unconfirmed names the replicas whose stops a release waits for.
	unconfirmed []string
	// fencerAtWork names the fencer the first step waits for (fencerAtWork),
	// and waitsForFencer is true when a ticket stays for it.
	fencerAtWork   string
	waitsForFencer bool
	// confirmStops: the release goes in two steps (confirmsReplicaStops);
	// kubeletAlive: the node's kubelet is not lost.
	confirmStops, kubeletAlive bool
	// unstopped are the targets whose pods wait to be force-deleted until
	// Longhorn detached their volumes and every replica is proven stopped.
	unstopped map[types.UID]bool
	// tickets are the volumes whose csi-attacher tickets for the node are
	// removed from Longhorn's VolumeAttachment first, before any write of
	// the strategy.
	tickets []failover.Volume
	// The strategy's writes: one for each of volumes, or, with node, one
	// for the node that releases all of them.
	strategy s3gwv1alpha1.ReleaseStrategy
	volumes  []failover.Volume
	node     bool
}

// planRelease releases, by the configured strategy, the volumes of the
// targets whose pods are gone from the API. Where the gate confirms replica
// stops (confirmsReplicaStops), each volume is first detached in Longhorn
// (its csi-attacher tickets for the node removed) and its replicas proven
// stopped (replica_stop.go), before its pod is force-deleted and before its
// release.
func planRelease(o failover.State, gate evidence.Gate) releasePlan {
	strategy := Of(o.Spec.Release.Strategy)
	p := releasePlan{strategy: strategy.Name, unstopped: map[types.UID]bool{},
		confirmStops: confirmsReplicaStops(o, gate), kubeletAlive: !o.Node.Heartbeat.Lost(o.Now)}
	if p.confirmStops {
		p.fencerAtWork = fencerAtWork(o, gate)
	}
	var nodeWide []failover.Volume
	waiting := false
	for _, t := range o.Targets {
		p.podsPresent = p.podsPresent || t.PodPresent
		p.waitingForKubelet = p.waitingForKubelet || (t.PodPresent && waitsForKubelet(o, t))
		evictable := evictable(o, gate, t)
		for _, v := range t.Volumes {
			if !v.ToRelease() {
				continue
			}
			p.pending = true
			switch {
			case evictable && p.confirmStops && !p.stopsConfirmed(o, v):
				p.unstopped[t.UID] = true
			case t.PodPresent:
				// The attach-detach controller still wants it on the node.
			default:
				wide, waits := p.planGoneVolume(o, strategy, v)
				waiting = waiting || waits
				if wide {
					nodeWide = append(nodeWide, v)
				}
			}
		}
	}
	if !waiting && p.nodeWriteDue(strategy, o.Node) {
		p.node, p.volumes = true, nodeWide
	}
	return p
}

// evictable is true for a target whose pod is to be force-deleted once its
// volumes can be released right after.
func evictable(o failover.State, gate evidence.Gate, t failover.Target) bool {
	return t.PodPresent && !t.ForceDeleted && !waitsForKubelet(o, t) && !keptByFinalizers(gate, t)
}

// nodeWriteDue is true when the strategy's one write for the node is due:
// a volume is still attached and every target pod is gone.
func (p *releasePlan) nodeWriteDue(strategy Strategy, n *failover.Node) bool {
	return strategy.NodeWrite != nil && p.pending && !p.podsPresent && strategy.NodeWrite(n)
}

// planGoneVolume plans the release of v, a volume whose pod is gone: its
// first step while that is not done (waits), then the strategy's write;
// nodeWide when the strategy's one write for the node serves it.
func (p *releasePlan) planGoneVolume(o failover.State, strategy Strategy, v failover.Volume) (nodeWide, waits bool) {
	switch {
	case p.confirmStops && !p.stopsConfirmed(o, v):
		return false, true
	case strategy.VolumeWrite == nil:
		return true, false
	case !strategy.VolumeWrite(v):
		// Nothing left to write for it.
	case strategy.WaitsForLostKubelet && p.kubeletAlive:
		// A live kubelet would undo the write.
		p.waitingForKubelet = true
	default:
		p.volumes = append(p.volumes, v)
	}
	return false, false
}

// stopsConfirmed is the first step of v's release: it plans the removal of
// Longhorn's csi-attacher tickets for the node while there are any, then
// notes the replicas not yet proven stopped; true once none is left.
func (p *releasePlan) stopsConfirmed(o failover.State, v failover.Volume) bool {
	if len(csiTickets(v)) > 0 {
		if p.fencerAtWork == "" {
			p.tickets = append(p.tickets, v)
		} else {
			p.waitsForFencer = true
		}
		return false
	}
	unconfirmed := unconfirmedStops(v, o.Node.Name)
	p.unconfirmed = append(p.unconfirmed, unconfirmed...)
	return len(unconfirmed) == 0
}

// waitsForKubelet is true while t's volumes wait for a strategy that needs
// the node's kubelet lost, and it is alive: the release could not follow a
// force-delete of t's pod.
func waitsForKubelet(o failover.State, t failover.Target) bool {
	strategy := Of(o.Spec.Release.Strategy)
	if !strategy.WaitsForLostKubelet || strategy.VolumeWrite == nil || o.Node.Heartbeat.Lost(o.Now) {
		return false
	}
	for _, v := range t.Volumes {
		if v.ToRelease() && strategy.VolumeWrite(v) {
			return true
		}
	}
	return false
}

// keptByFinalizers is true for a pod with finalizers while the gate rests on
// storage isolation alone: the force-delete would leave it in the API, and
// whenever its finalizers go the attach-detach controller's clock starts,
// a release at a time no check of ours covers. Isolation is a fact of this
// moment (a rack partition can take the replicas' nodes later); a fenced
// node stays fenced.
func keptByFinalizers(gate evidence.Gate, t failover.Target) bool {
	return len(t.Finalizers) > 0 && !gate.Disabled && !gate.ProvesShutdown && !failover.AllReleased([]failover.Target{t})
}
