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

package evidence

import (
	"testing"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"

	. "github.com/onsi/gomega"
)

// TestEvaluateGateEvidenceOfThisFailure covers the rules that tie evidence
// to the node's current failure and to replicas Longhorn can stop: stale
// evidence is named and never counted.
func TestEvaluateGateEvidenceOfThisFailure(t *testing.T) {
	before := fixture.FailedAt.Add(-time.Hour)
	tests := []struct {
		name     string
		mutate   func(o *failover.State)
		open     bool
		evidence []string
		missing  []string
	}{
		{
			name: "storage isolation fails with a replica on a second node Longhorn cannot reach",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				down := fixture.ReplicaOn("pvc-a", "worker-3")
				down.Host = fixture.DownNode()
				o.Targets[0].Volumes[0].Replicas = append(o.Targets[0].Volumes[0].Replicas, down)
			},
			missing: []string{"storage isolation: replica pvc-a-r-worker-3 of pvc-a is on node worker-3, which longhorn-manager cannot reach (Longhorn Node Ready=False (KubernetesNodeNotReady))"},
		},
		{
			name: "storage isolation fails with a failed replica on an unreachable node too",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				down := fixture.ReplicaOn("pvc-a", "worker-3")
				down.Healthy, down.Host = false, failover.ReplicaNode{}
				o.Targets[0].Volumes[0].Replicas = append(o.Targets[0].Volumes[0].Replicas, down)
			},
			missing: []string{"replica pvc-a-r-worker-3 of pvc-a is on node worker-3, which longhorn-manager cannot reach (no Longhorn Node)"},
		},
		{
			name: "storage isolation holds with every other replica reachable",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Targets[0].Volumes[0].Replicas = append(o.Targets[0].Volumes[0].Replicas, fixture.ReplicaOn("pvc-a", "worker-3"))
			},
			open:     true,
			evidence: []string{EvidenceStorageIsolation},
		},
		{
			name: "a taint the controller never saw absent does not count, however fresh its timeAdded looks",
			mutate: func(o *failover.State) {
				o.Sightings = nil
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
			},
			missing: []string{"the node.kubernetes.io/out-of-service taint is not known to be from this failure"},
		},
		{
			name: "a taint the controller saw appear after the failure counts, however old its timeAdded looks (the admin's clock)",
			mutate: func(o *failover.State) {
				o.Node.OutOfServiceTaint = &failover.Taint{TimeAdded: &before}
			},
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name:     "a taint without timeAdded counts: kube-controller-manager acts on it anyway",
			mutate:   func(o *failover.State) { o.Node.OutOfServiceTaint = &failover.Taint{} },
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name: "a taint seen absent only before the controller last saw the kubelet alive does not count",
			mutate: func(o *failover.State) {
				o.Sightings = []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: fixture.PtrTime(fixture.FailedAt.Add(-time.Second))}}
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
			},
			missing: []string{"is not known to be from this failure"},
		},
		{
			name: "a kubelet clock behind the controller's: its old-looking renewal, seen changing 30 s ago, keeps the node alive",
			mutate: func(o *failover.State) {
				o.Node.Heartbeat.LeaseRenewed = fixture.Now.Add(-10 * time.Minute)
				o.Node.Heartbeat.Seen = failover.HeartbeatSighting{LeaseRenewed: o.Node.Heartbeat.LeaseRenewed,
					KubeletPosted: o.Node.Heartbeat.KubeletPosted, At: fixture.Now.Add(-30 * time.Second), Witnessed: true}
				o.Sightings = []failover.EvidenceSighting{{Name: failover.TaintSighting, PendingAt: fixture.PtrTime(fixture.Now.Add(-20 * time.Second))}}
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
			},
			missing: []string{"is not trusted yet: the node's heartbeat changed at 2026-03-04T11:59:30Z, less than a Lease duration (40s) ago"},
		},
		{
			name: "the controller's first pass, the Lease last written 50 s before the Unknown transition (kube-apiserver's stamp): " +
				"a FAR created since counts at once",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Node.Heartbeat.LeaseWritten = fixture.FailedAt
				o.Node.Heartbeat.Seen = failover.HeartbeatSighting{LeaseRenewed: fixture.FailedAt, KubeletPosted: fixture.FailedAt, At: fixture.Now}
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/" + fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
			},
			open:     true,
			evidence: []string{"FenceAgentsRemediation/ns/worker-1"},
		},
		{
			name: "the controller's first pass without kube-apiserver's stamp (managedFields stripped): the FAR waits for a Lease duration " +
				"on the controller's clock",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Node.Heartbeat.Seen = failover.HeartbeatSighting{LeaseRenewed: fixture.FailedAt, KubeletPosted: fixture.FailedAt, At: fixture.Now}
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/" + fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
			},
			missing: []string{"is not trusted yet: the node's heartbeat changed at 2026-03-04T12:00:00Z, less than a Lease duration (40s) ago"},
		},
		{
			name: "the controller's first pass, the Lease written after the Unknown transition: the FAR waits",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Node.Heartbeat.LeaseWritten = fixture.FailedAt.Add(time.Minute)
				o.Node.Heartbeat.Seen = failover.HeartbeatSighting{LeaseRenewed: fixture.FailedAt, KubeletPosted: fixture.FailedAt, At: fixture.Now}
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/" + fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
			},
			missing: []string{"and the node went Unknown at 2026-03-04T11:50:50Z, less than that after the Lease's last stored " +
				"renewal (2026-03-04T11:51:00Z)"},
		},
		{
			name: "a FAR created before kube-controller-manager marked the node Unknown, never seen pending, does not count",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/" + fixture.NodeName, Fenced: true, CreatedAt: before}}
			},
			missing: []string{"FenceAgentsRemediation/ns/worker-1 FenceAgentActionSucceeded=True is not known to be from this failure"},
		},
		{
			name: "a FAR the controller saw pending after the kubelet's last sign of life counts, whenever it was created",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/" + fixture.NodeName, Fenced: true, CreatedAt: before}}
				o.Sightings = append(o.Sightings, failover.EvidenceSighting{Name: fixture.FARKind + "/ns/" + fixture.NodeName, PendingAt: fixture.PtrTime(fixture.FailedAt.Add(2 * time.Minute))})
			},
			open:     true,
			evidence: []string{fixture.FARKind + "/ns/" + fixture.NodeName},
		},
		{
			name: "a FAR created after the Unknown transition does not count once the controller saw the kubelet alive since",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/" + fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
				o.Node.Heartbeat.Seen.Witnessed = true
				o.Node.Heartbeat.Seen.Ready, o.Node.Heartbeat.Seen.ReadySince = failover.ReadyUnknown, o.Node.Heartbeat.ReadySince
			},
			missing: []string{"is not known to be from this failure"},
		},
		{
			name: "a node with no sign of life (re-created, no Lease, no status post): no timed evidence counts",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/" + fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
				o.Node.Heartbeat.LeaseRenewed, o.Node.Heartbeat.KubeletPosted = time.Time{}, time.Time{}
				o.Node.Heartbeat.Seen.LeaseRenewed, o.Node.Heartbeat.Seen.KubeletPosted = time.Time{}, time.Time{}
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
			},
			missing: []string{"FenceAgentsRemediation/ns/worker-1 FenceAgentActionSucceeded=True cannot be tied to this failure: the node has shown no sign of life",
				"the node.kubernetes.io/out-of-service taint cannot be tied to this failure"},
		},
		{
			name: "a stale FAR does not hide a fresh one",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{
					{Kind: fixture.FARKind, Name: "ns/old", Fenced: true, CreatedAt: before},
					{Kind: fixture.FARKind, Name: "ns/new", Fenced: true, CreatedAt: fixture.FencedAt},
				}
			},
			open:     true,
			evidence: []string{fixture.FARKind + "/ns/new"},
		},
		{
			name: "a delegate created before the failure and never seen pending does not count",
			mutate: func(o *failover.State) {
				fixture.WithDelegate(o)
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true, CreatedAt: before}
			},
			missing: []string{"delegate FenceAgentsRemediation/worker-1 FenceAgentActionSucceeded=True is not known to be from this failure"},
		},
		{
			name: "a listed kind whose apiVersion does not parse is reported; the other sources still count",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Evidence.InvalidRemediators = map[string]string{fixture.FARKind: `invalid apiVersion "a/b/c"`}
				o.Evidence.LonghornNode = failover.LonghornDown
			},
			open:     true,
			evidence: []string{EvidenceStorageIsolation},
		},
		{
			name: "a listed kind whose apiVersion does not parse is named in what is missing",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Evidence.InvalidRemediators = map[string]string{fixture.FARKind: `invalid apiVersion "a/b/c"`}
			},
			missing: []string{`FenceAgentsRemediation: invalid apiVersion "a/b/c"`},
		},
		{
			name: "evidence from while the kubelet still posted Ready=False does not count",
			mutate: func(o *failover.State) {
				posted := fixture.FencedAt.Add(time.Second)
				o.Node.Heartbeat.Ready, o.Node.Heartbeat.ReadySince, o.Node.Heartbeat.KubeletPosted = failover.ReadyFalse, posted, posted
				o.Node.Heartbeat.Seen = failover.HeartbeatSighting{LeaseRenewed: o.Node.Heartbeat.LeaseRenewed, KubeletPosted: posted,
					At: posted, Witnessed: true, Ready: failover.ReadyFalse, ReadySince: posted}
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "ns/" + fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt.Add(2 * time.Second)}}
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
			},
			missing: []string{"the node.kubernetes.io/out-of-service taint is not known to be from this failure",
				"FenceAgentActionSucceeded=True is not known to be from this failure"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.NotFenced()
			tt.mutate(&o)

			gate := Evaluate(o)

			g.Expect(gate.Open).To(Equal(tt.open), "missing: %q", gate.Missing)
			expectStrings(g, gate.Evidence, tt.evidence)
			for _, m := range tt.missing {
				g.Expect(gate.Missing).To(ContainSubstring(m))
			}
		})
	}
}
