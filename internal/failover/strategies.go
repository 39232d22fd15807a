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

// ReleaseStrategy describes one way to free a target's Longhorn volume from
// the failed node once its pod is gone from the API. Decide plans its
// writes from it (planRelease), the protection report budgets its time,
// and its adapter (internal/release.Releasers) performs the writes.
type ReleaseStrategy struct {
	Name s3gwv1alpha1.ReleaseStrategy
	// NeedsProofOfShutdown is true for a write that releases more than the
	// targets' Longhorn volumes (every volume, every pod on the node): only
	// safe for a node that is off, which storage isolation does not prove.
	NeedsProofOfShutdown bool
	// WaitsForLostKubelet is true for a write a live kubelet would undo:
	// it is made only once the kubelet is lost (Heartbeat.Lost), and a pod
	// is not force-deleted while its volumes would wait for that.
	WaitsForLostKubelet bool
	// VolumeWrite says whether v, a target volume still attached to the
	// node whose pod is gone, still needs the strategy's write; nil for a
	// strategy that writes once for the node.
	VolumeWrite func(v Volume) bool
	// NodeWrite says whether the node still needs the strategy's one write
	// once every target pod is gone; nil for a per-volume strategy.
	NodeWrite func(n *Node) bool
	// Budget is how long a failover took with it, from NodeHealthCheck
	// creating the S3GWRemediation to a Ready replacement on another node:
	// the worst of ten failures ("CR → Ready", max) in the failover
	// benchmark of 2026-11-30 (docs/benchmark.md,
	// bench/results/2026-11-30/results.md), Longhorn attach included. A
	// fencer's own time (a fence agent powering the node off) comes on top.
	Budget time.Duration
	// Needs are the API rights its adapter uses; test/manifests checks the
	// generated role grants them and the named policy admits the write.
	Needs []Need
}

// policyNodeWrites is config/policy's limit on the manager's node writes.
const policyNodeWrites = "manager-node-writes"

// Strategies are the release strategies; the first is the default.
var Strategies = []ReleaseStrategy{controllerDetach, deleteVolumeAttachment, outOfServiceTaintRelease}

// controllerDetach drops the volume from the node's status.volumesInUse,
// so kube-controller-manager's attach-detach controller detaches it at once
// through its normal path. A live kubelet rewrites that list, so it waits
// for a lost one.
var controllerDetach = ReleaseStrategy{
	Name:                s3gwv1alpha1.ReleaseControllerDetach,
	WaitsForLostKubelet: true,
	VolumeWrite:         func(v Volume) bool { return v.InUseOnNode },
	Budget:              5300 * time.Millisecond,
	Needs: []Need{{Resource: nodes, Verbs: read},
		{Resource: nodes + "/status", Verbs: []string{verbPatch}, Policy: policyNodeWrites}},
}

// deleteVolumeAttachment deletes the storage.k8s.io VolumeAttachment of the
// volume on the node; the attach-detach controller only notices at its
// periodic sync.
var deleteVolumeAttachment = ReleaseStrategy{
	Name:        s3gwv1alpha1.ReleaseDeleteVolumeAttachment,
	VolumeWrite: func(v Volume) bool { return len(v.Attachments) > 0 },
	Budget:      66 * time.Second,
	Needs: []Need{{Group: "storage.k8s.io", Resource: "volumeattachments", Verbs: []string{"list", "watch", verbDelete},
		Policy: "manager-attachment-deletes"}},
}

// outOfServiceTaintRelease adds node.kubernetes.io/out-of-service: the
// attach-detach controller force-detaches every volume on the node and Pod
// GC deletes its terminating pods, which is only safe for a node proven
// off. A taint already there (ours, a peer's, a fencer's) releases the
// volumes as well as ours would.
var outOfServiceTaintRelease = ReleaseStrategy{
	Name:                 s3gwv1alpha1.ReleaseOutOfServiceTaint,
	NeedsProofOfShutdown: true,
	NodeWrite:            func(n *Node) bool { return n.OutOfServiceTaint == nil },
	Budget:               10 * time.Second,
	Needs:                []Need{{Resource: nodes, Verbs: append(read[:len(read):len(read)], verbPatch), Policy: policyNodeWrites}},
}

// StrategyOf is the descriptor of the named strategy; unset means the
// default, ControllerDetach.
func StrategyOf(name s3gwv1alpha1.ReleaseStrategy) ReleaseStrategy {
	for _, s := range Strategies {
		if s.Name == name {
			return s
		}
	}
	return Strategies[0]
}

// ReleasePlan is what a pass releases, by the spec's strategy.
type ReleasePlan struct {
	Strategy s3gwv1alpha1.ReleaseStrategy
	// Volumes are the volumes this pass's writes release: one write each,
	// or, with Node, all of them by one write for the node.
	Volumes []Volume
	// Node is true when the strategy's one write for the node is due.
	Node bool
	// Tickets are the volumes whose csi-attacher tickets for the node are
	// removed from Longhorn's VolumeAttachment first (Volume.TicketIDs),
	// before any write of the strategy.
	Tickets []Volume
}

// Writes reports whether the plan writes anything.
func (p ReleasePlan) Writes() bool { return p.StrategyWrites() || len(p.Tickets) > 0 }

// StrategyWrites reports whether the strategy's own writes are due.
func (p ReleasePlan) StrategyWrites() bool { return p.Node || len(p.Volumes) > 0 }

// LonghornDetachNeeds are the rights the first step of every release uses:
// reading instance managers, and removing a csi-attacher ticket from
// Longhorn's VolumeAttachment, which the named policy limits to exactly
// that.
var LonghornDetachNeeds = []Need{
	{Group: groupLonghorn, Resource: "instancemanagers", Verbs: read},
	{Group: groupLonghorn, Resource: "volumeattachments", Verbs: []string{verbPatch}, Policy: "manager-longhorn-ticket-removals"},
}
