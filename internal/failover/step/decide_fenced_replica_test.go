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

package step

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

// TestDecideFencedReplicaNode: a replica on a node that is fenced itself
// (its own failure's fencer succeeded, or it carries the out-of-service
// taint) counts as unreachable whatever its Lease says: Longhorn cannot stop
// it, and its instance manager's record predates the fence.
func TestDecideFencedReplicaNode(t *testing.T) {
	// Each volume keeps a healthy replica on worker-3 too.
	fencedReplicaNode := func(o *failover.State) {
		v := &o.Targets[0].Volumes[0]
		v.Replicas = append(v.Replicas, fixture.ReplicaOn(v.LonghornVolume, "worker-3"))
		host := &v.Replicas[0].Host
		host.Ready, host.ReadySince = failover.ReadyUnknown, fixture.FailedAt
		host.Fencers = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/worker-2", Fenced: true, CreatedAt: fixture.FencedAt}}
	}
	taintedReplicaNode := func(o *failover.State) {
		v := &o.Targets[0].Volumes[0]
		v.Replicas = append(v.Replicas, fixture.ReplicaOn(v.LonghornVolume, "worker-3"))
		v.Replicas[0].Host.OutOfServiceTaint = true
	}
	tests := []struct {
		name    string
		obs     func() failover.State
		mutate  func(*failover.State)
		phase   s3gwv1alpha1.Phase
		reason  string
		message string
	}{
		{"storage isolation does not prove the failed node fenced while another replica node is fenced",
			fixture.FencedByIsolation, fencedReplicaNode, s3gwv1alpha1.PhaseWaitingForFencing, s3gwv1alpha1.ReasonWaitingForFencing,
			"replica pvc-a-r-worker-2 of pvc-a is on node worker-2, which longhorn-manager cannot reach (fenced by FenceAgentsRemediation/ns/worker-2)"},
		{"a fenced node's replica is not released, whatever the evidence for the failed node",
			fixture.Fenced, fencedReplicaNode, s3gwv1alpha1.PhaseWaitingForStorage, s3gwv1alpha1.ReasonReplicasUnreachable,
			"fenced by FenceAgentsRemediation/ns/worker-2"},
		{"an out-of-service taint on the replica's node fences it too",
			fixture.Fenced, taintedReplicaNode, s3gwv1alpha1.PhaseWaitingForStorage, s3gwv1alpha1.ReasonReplicasUnreachable,
			"fenced by node.kubernetes.io/out-of-service"},
		{"a fencer's success from an earlier failure of the replica's node proves nothing now",
			fixture.Fenced, func(o *failover.State) {
				fencedReplicaNode(o)
				o.Targets[0].Volumes[0].Replicas[0].Host.Fencers[0].CreatedAt = fixture.FailedAt.Add(-time.Hour)
			}, s3gwv1alpha1.PhaseEvicting, s3gwv1alpha1.ReasonRemediationStarted, "Moving s3gw off node worker-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := tt.obs()
			tt.mutate(&o)
			d := Decide(o)
			g.Expect(d.Phase).To(Equal(tt.phase))
			g.Expect(d.Reason).To(Equal(tt.reason))
			g.Expect(d.Message).To(ContainSubstring(tt.message))
			if tt.phase != s3gwv1alpha1.PhaseEvicting {
				g.Expect(d.Destructive()).To(BeFalse())
			}
		})
	}
}
