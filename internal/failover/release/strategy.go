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

// Package release decides how the targets' volumes leave the failed node
// once the gate is open: each release strategy is one descriptor
// (Strategy), and Plan orders the writes of a step — force-delete a pod only
// when its volumes can be released right after, detach in Longhorn first
// and confirm every replica stopped (the release in two steps), then the
// strategy's own write. It also refuses volumes no evidence may release
// (VolumeRules) and waits for a healthy, reachable replica elsewhere
// (StorageProblem). Its adapters, which write, are in internal/attachments.
package release

import (
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// Strategy describes one way to free a target's Longhorn volume from the
// failed node once its pod is gone from the API: Plan plans its writes, the
// protection report budgets its time, and its adapter
// (internal/attachments) performs them and cleans up after them.
type Strategy struct {
	Name s3gwv1alpha1.ReleaseStrategy
	// Summary says, in a line, what the strategy writes (the docs' and the
	// chart form's description).
	Summary string
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
	VolumeWrite func(v failover.Volume) bool
	// NodeWrite says whether the node still needs the strategy's one write
	// once every target pod is gone; nil for a per-volume strategy.
	NodeWrite func(n *failover.Node) bool
	// Tidy removes what the strategy's write left on the node once its work
	// is done, while NodeHealthCheck keeps the CR. Every strategy's Tidy
	// runs on every step, whichever the spec names: each removes only what
	// the node's own record says this remediation wrote. nil when the write
	// leaves nothing behind.
	Tidy func(s failover.State) []failover.Action
	// Budget is how long a failover took with it, from NodeHealthCheck
	// creating the S3GWRemediation to a Ready replacement on another node:
	// the worst of ten failures ("CR → Ready", max) in the failover
	// benchmark of 2026-11-30 (docs/benchmark.md), Longhorn attach
	// included. A fencer's own time (a fence agent powering the node off)
	// comes on top.
	Budget time.Duration
	// Needs are the API rights its adapter uses; test/manifests checks the
	// generated role grants them and the named policy admits the write.
	Needs []failover.Need
}

// policyNodeWrites is config/policy's limit on the manager's node writes.
const policyNodeWrites = "manager-node-writes"

// Strategies are the release strategies; the first is the default.
var Strategies = []Strategy{controllerDetach, deleteVolumeAttachment, outOfServiceTaint}

// Of is the descriptor of the named strategy; unset means the default,
// ControllerDetach.
func Of(name s3gwv1alpha1.ReleaseStrategy) Strategy {
	for _, s := range Strategies {
		if s.Name == name {
			return s
		}
	}
	return Strategies[0]
}

// Tidy is every strategy's Tidy, in the order of Strategies.
func Tidy(s failover.State) []failover.Action {
	var out []failover.Action
	for _, strategy := range Strategies {
		if strategy.Tidy != nil {
			out = append(out, strategy.Tidy(s)...)
		}
	}
	return out
}

// LonghornDetachNeeds are the rights the first step of every release uses:
// reading instance managers, and removing a csi-attacher ticket from
// Longhorn's VolumeAttachment, which the named policy limits to exactly
// that.
var LonghornDetachNeeds = []failover.Need{
	{Group: failover.GroupLonghorn, Resource: "instancemanagers", Verbs: failover.Read},
	{Group: failover.GroupLonghorn, Resource: "volumeattachments", Verbs: []string{failover.VerbPatch}, Policy: "manager-longhorn-ticket-removals"},
}
