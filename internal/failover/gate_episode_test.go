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
			name:    "a taint added before the node's last sign of life is stale",
			mutate:  func(o *Observation) { o.Node.OutOfServiceTaint = &Taint{TimeAdded: &before} },
			missing: []string{"the node.kubernetes.io/out-of-service taint is stale: it dates from 2026-03-04T10:50:00Z, not after the node's last sign of life at 2026-03-04T11:50:00Z"},
		},
		{
			name:     "a taint without timeAdded counts: kube-controller-manager acts on it anyway",
			mutate:   func(o *Observation) { o.Node.OutOfServiceTaint = &Taint{} },
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name: "a taint added at the last sign of life is stale",
			mutate: func(o *Observation) {
				at := testFailedAt
				o.Node.OutOfServiceTaint = &Taint{TimeAdded: &at}
			},
			missing: []string{"is stale"},
		},
		{
			name: "a fresh taint is not trusted while the node's Lease has not expired",
			mutate: func(o *Observation) {
				o.Node.Heartbeat.LeaseRenewed = testNow.Add(-90 * time.Second)
				o.Node.Heartbeat.LeaseDuration = 2 * time.Minute
				o.Node.OutOfServiceTaint = freshTaint()
			},
			missing: []string{"is not trusted yet: the node's Lease, renewed at 2026-03-04T11:58:30Z, has not expired"},
		},
		{
			name: "a FAR whose success is older than the failure is stale",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true, FencedAt: &before}}
			},
			missing: []string{"FenceAgentsRemediation/ns/worker-1 FenceAgentActionSucceeded=True is stale"},
		},
		{
			name: "a FAR success without lastTransitionTime is not counted",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "ns/" + testNode, Fenced: true}}
			},
			missing: []string{"has FenceAgentActionSucceeded=True without a lastTransitionTime"},
		},
		{
			name: "a stale FAR does not hide a fresh one",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{
					{Kind: farKind, Name: "ns/old", Fenced: true, FencedAt: &before},
					{Kind: farKind, Name: "ns/new", Fenced: true, FencedAt: fencedAt()},
				}
			},
			open:     true,
			evidence: []string{farKind + "/ns/new"},
		},
		{
			name: "a delegate whose success is older than the failure is stale",
			mutate: func(o *Observation) {
				withDelegate(o)
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, FencedAt: &before}
			},
			missing: []string{"delegate FenceAgentsRemediation/worker-1 FenceAgentActionSucceeded=True is stale"},
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
			name: "evidence from while the kubelet still reported Ready=False is stale",
			mutate: func(o *Observation) {
				o.Node.Heartbeat.Ready = ReadyFalse
				o.Node.Heartbeat.ReadySince = testFencedAt.Add(time.Second)
				o.Node.OutOfServiceTaint = freshTaint()
			},
			missing: []string{"is stale"},
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
