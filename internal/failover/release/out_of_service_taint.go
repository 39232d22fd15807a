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
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// outOfServiceTaint adds node.kubernetes.io/out-of-service: the
// attach-detach controller force-detaches every volume on the node and Pod
// GC deletes its terminating pods, which is only safe for a node proven
// off. A taint already there (ours, a peer's, a fencer's) releases the
// volumes as well as ours would. The node records the taint's owner in an
// annotation, so only this remediation's own taint is ever removed.
var outOfServiceTaint = Strategy{
	Name:                 s3gwv1alpha1.ReleaseOutOfServiceTaint,
	Summary:              "adds node.kubernetes.io/out-of-service=nodeshutdown:NoExecute: fast, but it evicts every pod on the node that does not tolerate it, Longhorn's own included; removed once its work is done",
	NeedsProofOfShutdown: true,
	NodeWrite:            func(n *failover.Node) bool { return n.OutOfServiceTaint == nil },
	Tidy:                 tidyOwnTaint,
	Budget:               10 * time.Second,
	Needs: []failover.Need{{Resource: failover.Nodes, Verbs: append(failover.Read[:len(failover.Read):len(failover.Read)], failover.VerbPatch),
		Policy: policyNodeWrites}},
}

// tidyOwnTaint removes the taint this remediation added once its work is
// done (OwnTaintDone), and the node's owner annotation once it names no
// taint on the node (a fencer removed ours by key), so a taint added later
// is never taken for ours.
func tidyOwnTaint(s failover.State) []failover.Action {
	switch {
	case OwnTaintDone(s):
		return []failover.Action{{Kind: failover.RemoveOwnTaint, Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}}
	case s.Node != nil && s.Node.StaleTaintOwner:
		return []failover.Action{{Kind: failover.DropStaleTaintOwner, Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}}
	}
	return nil
}

// OwnTaintDone reports whether the out-of-service taint this remediation
// added has done its work while NHC still keeps the CR (healthyDelay, a
// paused or Disabled NodeHealthCheck): the node is Ready again, and every
// recorded target is replaced, its pod gone, its volumes released from the
// node and a Ready replacement on another node, which has them attached
// there. Left on, the NoExecute taint would evict every pod scheduled onto
// the healthy node. SNR likewise removes its taint once the node's pods and
// VolumeAttachments are gone (self-node-remediation,
// internal/controller/selfnoderemediation_controller.go,
// useOutOfServiceTaint and isResourceDeletionCompleted). A taint someone
// else added is never ours to remove; a timed-out or excluded step reads no
// targets and removes nothing, leaving it to the cleanup on deletion.
func OwnTaintDone(o failover.State) bool {
	if o.Node == nil || !o.Node.Ready || o.Node.OutOfServiceTaint == nil || !o.Node.OutOfServiceTaint.Ours ||
		len(o.Targets) == 0 {
		return false
	}
	for _, t := range o.Targets {
		if !t.Recorded || t.State() != s3gwv1alpha1.TargetReplaced {
			return false
		}
	}
	return true
}
