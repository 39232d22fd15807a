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

// TestEvaluateGateEvidenceOfThisFailure covers the rules that tie evidence
// to the node's current failure and to replicas Longhorn can stop: stale
// evidence is named and never counted.
func TestEvaluateGateEvidenceOfThisFailure(t *testing.T) {
	before := testFailedAt.Add(-time.Hour)
	tests := []struct {
		name     string
		mutate   func(o *Observation)
		open     bool
		evidence []string
		missing  []string
	}{
		{
			name: "storage isolation fails with a replica on a second node Longhorn cannot reach",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				down := replicaOn("pvc-a", "worker-3")
				down.Host = downNode()
				o.Targets[0].Volumes[0].Replicas = append(o.Targets[0].Volumes[0].Replicas, down)
			},
			missing: []string{"storage isolation: replica pvc-a-r-worker-3 of pvc-a is on node worker-3, which longhorn-manager cannot reach (Longhorn Node Ready=False (KubernetesNodeNotReady))"},
		},
		{
			name: "storage isolation fails with a failed replica on an unreachable node too",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				down := replicaOn("pvc-a", "worker-3")
				down.Healthy, down.Host = false, ReplicaNode{}
				o.Targets[0].Volumes[0].Replicas = append(o.Targets[0].Volumes[0].Replicas, down)
			},
			missing: []string{"replica pvc-a-r-worker-3 of pvc-a is on node worker-3, which longhorn-manager cannot reach (no Longhorn Node)"},
		},
		{
			name: "storage isolation holds with every other replica reachable",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				o.Targets[0].Volumes[0].Replicas = append(o.Targets[0].Volumes[0].Replicas, replicaOn("pvc-a", "worker-3"))
			},
			open:     true,
			evidence: []string{EvidenceStorageIsolation},
		},
		{
			name: "a taint the controller never saw absent does not count, however fresh its timeAdded looks",
			mutate: func(o *Observation) {
				o.Sightings = nil
				o.Node.OutOfServiceTaint = freshTaint()
			},
			missing: []string{"the node.kubernetes.io/out-of-service taint is not known to be from this failure"},
		},
		{
			name: "a taint the controller saw appear after the failure counts, however old its timeAdded looks (the admin's clock)",
			mutate: func(o *Observation) {
				o.Node.OutOfServiceTaint = &Taint{TimeAdded: &before}
			},
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name:     "a taint without timeAdded counts: kube-controller-manager acts on it anyway",
			mutate:   func(o *Observation) { o.Node.OutOfServiceTaint = &Taint{} },
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name: "a taint seen absent only before the controller last saw the kubelet alive does not count",
			mutate: func(o *Observation) {
				o.Sightings = []EvidenceSighting{{Name: TaintSighting, PendingAt: ptrTime(testFailedAt.Add(-time.Second))}}
				o.Node.OutOfServiceTaint = freshTaint()
			},
			missing: []string{"is not known to be from this failure"},
		},
		{
			name: "a kubelet clock behind the controller's: its old-looking renewal, seen changing 30 s ago, keeps the node alive",
			mutate: func(o *Observation) {
				o.Node.Heartbeat.LeaseRenewed = testNow.Add(-10 * time.Minute)
				o.Node.Heartbeat.Seen = HeartbeatSighting{LeaseRenewed: o.Node.Heartbeat.LeaseRenewed,
					KubeletPosted: o.Node.Heartbeat.KubeletPosted, At: testNow.Add(-30 * time.Second), Witnessed: true}
				o.Sightings = []EvidenceSighting{{Name: TaintSighting, PendingAt: ptrTime(testNow.Add(-20 * time.Second))}}
				o.Node.OutOfServiceTaint = freshTaint()
			},
			missing: []string{"is not trusted yet: the controller saw the node's heartbeat change at 2026-03-04T11:59:30Z, less than a Lease duration (40s) ago"},
		},
		{
			name: "the controller's first pass, the Lease last written 50 s before the Unknown transition (kube-apiserver's stamp): " +
				"a FAR created since counts at once",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Node.Heartbeat.LeaseWritten = testFailedAt
				o.Node.Heartbeat.Seen = HeartbeatSighting{LeaseRenewed: testFailedAt, KubeletPosted: testFailedAt, At: testNow}
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, CreatedAt: testFencedAt}}
			},
			open:     true,
			evidence: []string{"FenceAgentsRemediation/ns/worker-1"},
		},
		{
			name: "the controller's first pass without kube-apiserver's stamp (managedFields stripped): the FAR waits for a Lease duration " +
				"on the controller's clock",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Node.Heartbeat.Seen = HeartbeatSighting{LeaseRenewed: testFailedAt, KubeletPosted: testFailedAt, At: testNow}
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, CreatedAt: testFencedAt}}
			},
			missing: []string{"is not trusted yet: the controller saw the node's heartbeat change at 2026-03-04T12:00:00Z, less than a Lease duration (40s) ago"},
		},
		{
			name: "the controller's first pass, the Lease written after the Unknown transition: the FAR waits",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Node.Heartbeat.LeaseWritten = testFailedAt.Add(time.Minute)
				o.Node.Heartbeat.Seen = HeartbeatSighting{LeaseRenewed: testFailedAt, KubeletPosted: testFailedAt, At: testNow}
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, CreatedAt: testFencedAt}}
			},
			missing: []string{"and kube-controller-manager marked the node Unknown at 2026-03-04T11:50:50Z, less than that after kube-apiserver " +
				"stored the Lease's last renewal (2026-03-04T11:51:00Z)"},
		},
		{
			name: "a FAR created before kube-controller-manager marked the node Unknown, never seen pending, does not count",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, CreatedAt: before}}
			},
			missing: []string{"FenceAgentsRemediation/ns/worker-1 FenceAgentActionSucceeded=True is not known to be from this failure"},
		},
		{
			name: "a FAR the controller saw pending after the kubelet's last sign of life counts, whenever it was created",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, CreatedAt: before}}
				o.Sightings = append(o.Sightings, EvidenceSighting{Name: farKind + "/ns/" + testNode, PendingAt: ptrTime(testFailedAt.Add(2 * time.Minute))})
			},
			open:     true,
			evidence: []string{farKind + "/ns/" + testNode},
		},
		{
			name: "a FAR created after the Unknown transition does not count once the controller saw the kubelet alive since",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, CreatedAt: testFencedAt}}
				o.Node.Heartbeat.Seen.Witnessed = true
				o.Node.Heartbeat.Seen.Ready, o.Node.Heartbeat.Seen.ReadySince = ReadyUnknown, o.Node.Heartbeat.ReadySince
			},
			missing: []string{"is not known to be from this failure"},
		},
		{
			name: "a node with no sign of life (re-created, no Lease, no status post): no timed evidence counts",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, CreatedAt: testFencedAt}}
				o.Node.Heartbeat.LeaseRenewed, o.Node.Heartbeat.KubeletPosted = time.Time{}, time.Time{}
				o.Node.Heartbeat.Seen.LeaseRenewed, o.Node.Heartbeat.Seen.KubeletPosted = time.Time{}, time.Time{}
				o.Node.OutOfServiceTaint = freshTaint()
			},
			missing: []string{"FenceAgentsRemediation/ns/worker-1 FenceAgentActionSucceeded=True cannot be tied to this failure: the node has shown no sign of life",
				"the node.kubernetes.io/out-of-service taint cannot be tied to this failure"},
		},
		{
			name: "a stale FAR does not hide a fresh one",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{
					{Kind: farKind, Name: "ns/old", Fenced: true, CreatedAt: before},
					{Kind: farKind, Name: "ns/new", Fenced: true, CreatedAt: testFencedAt},
				}
			},
			open:     true,
			evidence: []string{farKind + "/ns/new"},
		},
		{
			name: "a delegate created before the failure and never seen pending does not count",
			mutate: func(o *Observation) {
				withDelegate(o)
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, CreatedAt: before}
			},
			missing: []string{"delegate FenceAgentsRemediation/worker-1 FenceAgentActionSucceeded=True is not known to be from this failure"},
		},
		{
			name: "a listed kind whose apiVersion does not parse is reported; the other sources still count",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.InvalidRemediators = map[string]string{farKind: `invalid apiVersion "a/b/c"`}
				o.Evidence.LonghornNode = longhornDown
			},
			open:     true,
			evidence: []string{EvidenceStorageIsolation},
		},
		{
			name: "a listed kind whose apiVersion does not parse is named in what is missing",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.InvalidRemediators = map[string]string{farKind: `invalid apiVersion "a/b/c"`}
			},
			missing: []string{`FenceAgentsRemediation: invalid apiVersion "a/b/c"`},
		},
		{
			name: "evidence from while the kubelet still posted Ready=False does not count",
			mutate: func(o *Observation) {
				posted := testFencedAt.Add(time.Second)
				o.Node.Heartbeat.Ready, o.Node.Heartbeat.ReadySince, o.Node.Heartbeat.KubeletPosted = ReadyFalse, posted, posted
				o.Node.Heartbeat.Seen = HeartbeatSighting{LeaseRenewed: o.Node.Heartbeat.LeaseRenewed, KubeletPosted: posted,
					At: posted, Witnessed: true, Ready: ReadyFalse, ReadySince: posted}
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, CreatedAt: testFencedAt.Add(2 * time.Second)}}
				o.Node.OutOfServiceTaint = freshTaint()
			},
			missing: []string{"the node.kubernetes.io/out-of-service taint is not known to be from this failure",
				"FenceAgentActionSucceeded=True is not known to be from this failure"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := notFenced()
			tt.mutate(&o)

			gate := EvaluateGate(o)

			g.Expect(gate.Open).To(Equal(tt.open), "missing: %q", gate.Missing)
			expectStrings(g, gate.Evidence, tt.evidence)
			for _, m := range tt.missing {
				g.Expect(gate.Missing).To(ContainSubstring(m))
			}
		})
	}
}
