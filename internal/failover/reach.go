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

import "time"

// LonghornNode is a Longhorn Node's Ready condition, as Longhorn reports it.
type LonghornNode struct {
	// Found is false when Longhorn has no Node of that name.
	Found bool
	// Status and Reason are its Ready condition's; Status is "Unknown" for
	// a Node without one.
	Status, Reason string
}

// Ready reports whether longhorn-manager runs and reaches the node.
func (n LonghornNode) Ready() bool { return n.Status == ReadyTrue }

// Longhorn's reasons for a Node that is Ready=False because Kubernetes
// reports the node NotReady or gone.
const (
	LonghornNodeNotReady = "KubernetesNodeNotReady"
	LonghornNodeGone     = "KubernetesNodeGone"
)

// Down reports whether Longhorn considers the node down: its Node is
// Ready=False because Kubernetes reports it NotReady or gone. Only then does
// Longhorn finish a detach without contacting the node.
func (n LonghornNode) Down() bool {
	return n.Status == ReadyFalse && (n.Reason == LonghornNodeNotReady || n.Reason == LonghornNodeGone)
}

// String says what Longhorn reports, for messages.
func (n LonghornNode) String() string {
	switch {
	case !n.Found:
		return "no Longhorn Node"
	case n.Reason == "":
		return "Longhorn Node Ready=" + n.Status
	default:
		return "Longhorn Node Ready=" + n.Status + " (" + n.Reason + ")"
	}
}

// ReplicaNode is what the API shows of the node a replica lives on: its
// Longhorn Node and its kubelet's Lease (Heartbeat's Ready condition is
// not read), and what fences it.
type ReplicaNode struct {
	Longhorn  LonghornNode
	Heartbeat Heartbeat
	// InstanceManagers are the node's instance managers as Longhorn last
	// recorded them (confirmStopped).
	InstanceManagers []InstanceManager
	// Ready and ReadySince are the node's own Ready condition and its
	// lastTransitionTime; OutOfServiceTaint is true while it carries
	// node.kubernetes.io/out-of-service. Fencers are the CRs of the fencing
	// kinds the spec counts that remediate it (Fence).
	Ready             string
	ReadySince        time.Time
	OutOfServiceTaint bool
	Fencers           []RemediatorCR
}

// Fence names the evidence that the node itself is fenced in its current
// failure, or is empty: an out-of-service taint on it, or a fencer's CR
// that proves it fenced and was created after the node went Unknown (on the
// control plane's clocks). A fenced node's replica cannot be stopped by
// Longhorn and its instance manager's record is the last one written before
// the fence, whatever its kubelet's Lease still says.
func (n ReplicaNode) Fence() string {
	if n.OutOfServiceTaint {
		return TaintSighting
	}
	for _, cr := range n.Fencers {
		if cr.Fenced && n.Ready == ReadyUnknown && cr.CreatedAt.After(n.ReadySince) {
			return CRSighting(cr)
		}
	}
	return ""
}

// Reach reports whether longhorn-manager can stop a replica process on the
// node at now, and otherwise what the API shows of it. It cannot on a node
// that is fenced itself (Fence). It can when the Longhorn Node is
// Ready=True and the kubelet renewed its Lease within half the Lease's
// duration (two renewals): a node that stopped renewing is
// suspect long before the node-lifecycle controller marks it NotReady, and
// Longhorn after that. Only then will Longhorn stop a replica there on
// detach. The remediation and the protection report judge it alike.
func (n ReplicaNode) Reach(now time.Time) (reachable bool, state string) {
	hb := n.Heartbeat
	switch {
	case n.Fence() != "":
		return false, "fenced by " + n.Fence()
	case !n.Longhorn.Ready():
		return false, n.Longhorn.String()
	case hb.LeaseRenewed.IsZero():
		return false, "no kubelet Lease"
	case hb.Lagging(now):
		return false, "kubelet Lease " + hb.lastRenewal() + "; a live kubelet renews every " + (hb.LeaseDurationOrDefault() / 4).String()
	default:
		return true, ""
	}
}

// InstanceManager is what Longhorn last recorded of an instance manager on
// a replica's node: its state and, by replica name, the state of the
// replica processes it lists.
type InstanceManager struct {
	Name, State string
	Replicas    map[string]string
}

// LonghornDown is a Longhorn Node once Kubernetes marked its node NotReady.
var LonghornDown = LonghornNode{Found: true, Status: ReadyFalse, Reason: LonghornNodeNotReady}
