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
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestReach(t *testing.T) {
	renewedAgo := func(ago time.Duration) Heartbeat {
		return Heartbeat{LeaseRenewed: testNow.Add(-ago), LeaseDuration: 40 * time.Second}
	}
	seenRenewed := func(ago time.Duration) Heartbeat {
		hb := renewedAgo(time.Hour) // the node's clock, far behind
		hb.Seen = HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, At: testNow.Add(-ago), Witnessed: true}
		return hb
	}
	ready := LonghornNode{Found: true, Status: ReadyTrue}
	tests := []struct {
		name      string
		node      ReplicaNode
		reachable bool
		state     string
	}{
		{"Longhorn Node Ready, Lease fresh", ReplicaNode{Longhorn: ready, Heartbeat: renewedAgo(10 * time.Second)}, true, ""},
		{"Lease renewed half its duration ago: one renewal missed at most", ReplicaNode{Longhorn: ready, Heartbeat: renewedAgo(20 * time.Second)}, true, ""},
		{"two renewals missed", ReplicaNode{Longhorn: ready, Heartbeat: renewedAgo(21 * time.Second)}, false,
			"kubelet Lease not renewed since 2026-03-04T11:59:39Z (its renewTime, on the node's clock); a live kubelet renews every 10s"},
		{"two renewals missed, timed on the controller's clock", ReplicaNode{Longhorn: ready, Heartbeat: seenRenewed(21 * time.Second)}, false,
			"kubelet Lease seen renewed at 2026-03-04T11:59:39Z (this controller's clock); a live kubelet renews every 10s"},
		{"no Lease", ReplicaNode{Longhorn: ready}, false, "no kubelet Lease"},
		{"Longhorn reports it down", ReplicaNode{Longhorn: LonghornDown, Heartbeat: renewedAgo(time.Second)}, false,
			"Longhorn Node Ready=False (KubernetesNodeNotReady)"},
		{"Longhorn does not know it", ReplicaNode{Heartbeat: renewedAgo(time.Second)}, false, "no Longhorn Node"},
		{"Longhorn Node without Ready condition", ReplicaNode{Longhorn: LonghornNode{Found: true, Status: ReadyUnknown}, Heartbeat: renewedAgo(time.Second)},
			false, "Longhorn Node Ready=Unknown"},
		// A node fenced itself is unreachable whatever its Lease says.
		{"an out-of-service taint on it, Lease fresh", fenced(func(n *ReplicaNode) { n.OutOfServiceTaint = true }), false,
			"fenced by node.kubernetes.io/out-of-service"},
		{"a fencer's success created after it went Unknown, Lease fresh", fenced(func(n *ReplicaNode) {
			n.Fencers = []RemediatorCR{{Kind: "FenceAgentsRemediation", Name: "ns/worker-3", Fenced: true, CreatedAt: testNow.Add(-time.Minute)}}
		}), false, "fenced by FenceAgentsRemediation/ns/worker-3"},
		{"a fencer's success from before it went Unknown proves nothing of this failure", fenced(func(n *ReplicaNode) {
			n.Fencers = []RemediatorCR{{Kind: "FenceAgentsRemediation", Name: "ns/worker-3", Fenced: true, CreatedAt: testNow.Add(-time.Hour)}}
		}), true, ""},
		{"a fencer at work proves nothing yet", fenced(func(n *ReplicaNode) {
			n.Fencers = []RemediatorCR{{Kind: "FenceAgentsRemediation", Name: "ns/worker-3", CreatedAt: testNow.Add(-time.Minute)}}
		}), true, ""},
		{"a fencer's success while the node is Ready proves nothing", fenced(func(n *ReplicaNode) {
			n.Ready = ReadyTrue
			n.Fencers = []RemediatorCR{{Kind: "FenceAgentsRemediation", Name: "ns/worker-3", Fenced: true, CreatedAt: testNow.Add(-time.Minute)}}
		}), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reachable, state := tt.node.Reach(testNow)
			NewWithT(t).Expect([]any{reachable, state}).To(Equal([]any{tt.reachable, tt.state}))
		})
	}
}

// fenced is a reachable replica node, its Lease fresh, that went Unknown
// ten minutes ago, changed by mutate.
func fenced(mutate func(*ReplicaNode)) ReplicaNode {
	n := ReplicaNode{Longhorn: LonghornNode{Found: true, Status: ReadyTrue},
		Heartbeat: Heartbeat{LeaseRenewed: testNow.Add(-time.Second), LeaseDuration: 40 * time.Second},
		Ready:     ReadyUnknown, ReadySince: testNow.Add(-10 * time.Minute)}
	mutate(&n)
	return n
}
