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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Fixtures shared by the tests of this package.
const (
	testNode  = "worker-1"
	farKind   = "FenceAgentsRemediation"
	snrKind   = "SelfNodeRemediation"
	farCond   = "FenceAgentActionSucceeded"
	delegated = "FenceAgentsRemediation"
)

var testNow = time.Date(2026, time.March, 4, 12, 0, 0, 0, time.UTC)

// The failure's timeline: the node's kubelet last renewed its Lease and
// posted status at testFailedAt, the node-lifecycle controller marked it
// Unknown 50 s later, and fencers acted at testFencedAt.
var (
	testFailedAt = testNow.Add(-10 * time.Minute)
	testFencedAt = testNow.Add(-time.Minute)
)

// deadKubelet is the heartbeat of a node whose kubelet went silent at
// testFailedAt, as the controller saw it: its last renewal read at once.
func deadKubelet() Heartbeat {
	return Heartbeat{Ready: ReadyUnknown, ReadySince: testFailedAt.Add(50 * time.Second),
		KubeletPosted: testFailedAt, LeaseRenewed: testFailedAt, LeaseDuration: 40 * time.Second,
		Seen: HeartbeatSighting{KubeletPosted: testFailedAt, LeaseRenewed: testFailedAt, At: testFailedAt}}
}

// sawUntainted is the controller's sighting of the node without an
// out-of-service taint after the failure: a taint added since is current.
func sawUntainted() []EvidenceSighting {
	return []EvidenceSighting{{Name: TaintSighting, PendingAt: ptrTime(testFailedAt.Add(time.Minute))}}
}

// fencedAt is the time fencers acted at, after the failure.
func fencedAt() *time.Time { t := testFencedAt; return &t }

// freshTaint is an out-of-service taint an admin or a fencer added after
// the failure.
func freshTaint() *Taint { return &Taint{TimeAdded: fencedAt()} }

// ourTaint is the out-of-service taint this remediation added.
func ourTaint() *Taint { return &Taint{TimeAdded: fencedAt(), Owner: "uid-remediation"} }

// replicaOn is a healthy replica on a node longhorn-manager reaches.
func replicaOn(volume, node string) Replica {
	return Replica{Name: volume + "-r-" + node, Node: node, Healthy: true, Host: reachableNode()}
}

// reachableNode is a node whose Longhorn Node is Ready, whose kubelet
// renewed its Lease just now, and whose running instance manager lists no
// replica process.
func reachableNode() ReplicaNode {
	return ReplicaNode{Longhorn: LonghornNode{Found: true, Status: ReadyTrue},
		Heartbeat:        Heartbeat{LeaseRenewed: testNow.Add(-time.Second), LeaseDuration: 40 * time.Second},
		InstanceManagers: []InstanceManager{{Name: "instance-manager-0", State: "running"}}}
}

// downNode is a node Kubernetes marked NotReady: Longhorn reports it down.
func downNode() ReplicaNode {
	return ReplicaNode{Longhorn: longhornDown, Heartbeat: deadKubelet()}
}

// attachedVolume is a Longhorn RWO volume Kubernetes still attaches to the
// failed node, with no replica on it and a healthy replica elsewhere whose
// stop its instance manager confirms: the release's first step, removing
// Longhorn's ticket, is done (attachedInLonghorn is the volume before it).
func attachedVolume(name string) Volume {
	return Volume{
		Claim:            "data-" + name,
		PersistentVolume: "pv-" + name,
		LonghornVolume:   "pvc-" + name,
		Replicas:         []Replica{replicaOn("pvc-"+name, "worker-2")},
		Attachments:      []Attachment{{Name: "csi-" + name}},
		InUseOnNode:      true,
	}
}

// attachedInLonghorn is attachedVolume with Longhorn's csi-attacher ticket
// for the failed node still in place, its replica still running.
func attachedInLonghorn(name string) Volume {
	v := attachedVolume(name)
	v.Tickets = []Ticket{{ID: "csi-" + name, Type: "csi-attacher"}}
	v.Replicas[0].Host.InstanceManagers[0].Replicas = map[string]string{v.Replicas[0].Name: "running"}
	return v
}

// releasedVolume is a Longhorn RWO volume nothing attaches to the node any more.
func releasedVolume(name string) Volume {
	v := attachedVolume(name)
	v.Attachments, v.InUseOnNode, v.Tickets = nil, false, nil
	return v
}

// skippedVolume is not a Longhorn RWO volume; it looks attached everywhere so
// that touching it would show.
func skippedVolume(name string) Volume {
	v := attachedVolume(name)
	v.SkipReason = "not a ReadWriteOnce volume of driver.longhorn.io"
	v.Replicas = []Replica{replicaOn(v.LonghornVolume, testNode)}
	return v
}

// recordedTarget is a recorded s3gw pod still present in the API.
func recordedTarget(name string, volumes ...Volume) Target {
	return Target{
		Namespace:  "s3gw",
		Name:       name,
		UID:        types.UID("uid-" + name),
		Recorded:   true,
		PodPresent: true,
		Volumes:    volumes,
	}
}

// notFenced is a NotReady node in RequireEvidence mode with the default
// sources (out-of-service taint and storage isolation) enabled, one recorded
// target with one attached volume, Longhorn installed, and no evidence at all:
// the gate is closed.
func notFenced() Observation {
	return Observation{
		Now: testNow,
		Spec: s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeRequireEvidence},
		},
		Node:              &Node{Name: testNode, Heartbeat: deadKubelet()},
		Episode:           ptr.To(deadKubelet().Episode()),
		Sightings:         sawUntainted(),
		Targets:           []Target{recordedTarget("s3gw-0", attachedVolume("a"))},
		LonghornAvailable: true,
	}
}

func withFAR(o *Observation) {
	o.Spec.Fencing.Remediators = []s3gwv1alpha1.RemediatorEvidence{{
		APIVersion: "fence-agents-remediation.medik8s.io/v1alpha1", Kind: farKind, ConditionType: farCond,
	}}
}

func withDelegate(o *Observation) {
	o.Spec.Fencing.Delegate = &s3gwv1alpha1.DelegateFencing{
		APIVersion: "fence-agents-remediation.medik8s.io/v1alpha1", Kind: delegated + "Template",
		Name: "ipmi", ConditionType: farCond,
	}
}

func withoutDefaultSources(o *Observation) {
	o.Spec.Fencing.OutOfServiceTaint = ptr.To(false)
	o.Spec.Fencing.StorageIsolation = ptr.To(false)
}

func TestEvaluateGate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(o *Observation)
		// open, disabled and evidence are compared exactly.
		open     bool
		disabled bool
		evidence []string
		// missing are substrings Gate.Missing must contain (closed gates).
		missing []string
		// notMissing are substrings Gate.Missing must not contain.
		notMissing []string
		// sources is compared exactly with Gate.MissingSources.
		sources []string
	}{
		{
			name: "node missing",
			mutate: func(o *Observation) {
				o.Node = nil
				o.Evidence.LonghornNode = longhornDown
			},
			missing: []string{"the node does not exist"},
		},
		{
			name: "node missing in Disabled mode",
			mutate: func(o *Observation) {
				o.Node = nil
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
			},
			missing: []string{"the node does not exist"},
		},
		{
			name: "node Ready, even with every source holding",
			mutate: func(o *Observation) {
				withFAR(o)
				withDelegate(o)
				o.Node.Ready = true
				o.Node.OutOfServiceTaint = freshTaint()
				o.Evidence.LonghornNode = longhornDown
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt}}
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, CreatedAt: testFencedAt}
			},
			missing: []string{"node worker-1 is Ready"},
		},
		{
			name:     "Disabled mode opens without evidence",
			mutate:   func(o *Observation) { o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled },
			open:     true,
			disabled: true,
			evidence: []string{EvidenceFencingDisabled},
		},
		{
			name: "Disabled mode with every source disabled and Longhorn missing",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
				o.LonghornAvailable = false
				o.Targets = nil
			},
			open:     true,
			disabled: true,
			evidence: []string{EvidenceFencingDisabled},
		},
		{
			name: "Disabled mode stays closed for a Ready node",
			mutate: func(o *Observation) {
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
				o.Node.Ready = true
			},
			missing: []string{"node worker-1 is Ready"},
		},
		{
			name: "no evidence: closed with the default sources missing",
			missing: []string{
				"no node.kubernetes.io/out-of-service taint",
				"storage isolation: Longhorn does not report the node down",
			},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name:    "unset mode means RequireEvidence",
			mutate:  func(o *Observation) { o.Spec.Fencing.Mode = "" },
			missing: []string{"no node.kubernetes.io/out-of-service taint"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "no source enabled never opens",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				o.Node.OutOfServiceTaint = freshTaint()
				o.Evidence.LonghornNode = longhornDown
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt}}
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, CreatedAt: testFencedAt}
			},
		},

		// Out-of-service taint.
		{
			name:     "foreign out-of-service taint alone opens",
			mutate:   func(o *Observation) { o.Node.OutOfServiceTaint = freshTaint() },
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name: "foreign out-of-service taint with the source explicitly enabled",
			mutate: func(o *Observation) {
				o.Spec.Fencing.OutOfServiceTaint = ptr.To(true)
				o.Node.OutOfServiceTaint = freshTaint()
			},
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name:    "our own out-of-service taint is never evidence",
			mutate:  func(o *Observation) { o.Node.OutOfServiceTaint = ourTaint() },
			missing: []string{"no node.kubernetes.io/out-of-service taint"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "foreign out-of-service taint ignored when the source is disabled",
			mutate: func(o *Observation) {
				o.Spec.Fencing.OutOfServiceTaint = ptr.To(false)
				o.Node.OutOfServiceTaint = freshTaint()
			},
			missing:    []string{"storage isolation: Longhorn does not report the node down"},
			notMissing: []string{"out-of-service"},
			sources:    []string{EvidenceStorageIsolation},
		},

		// Listed remediators.
		{
			name: "listed remediator CR fenced alone opens",
			mutate: func(o *Observation) {
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt}}
			},
			open:     true,
			evidence: []string{farKind + "/" + testNode},
		},
		{
			name: "listed remediator opens with the default sources disabled",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt}}
			},
			open:     true,
			evidence: []string{farKind + "/" + testNode},
		},
		{
			name: "listed remediator CR present but not fenced",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: testNode}}
			},
			missing: []string{farKind + "/" + testNode + " has no " + farCond + "=True"},
			sources: []string{farKind},
		},
		{
			name: "listed remediator CR absent",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				withFAR(o)
			},
			missing: []string{"no " + farKind + " for the node"},
			sources: []string{farKind},
		},
		{
			name: "fenced remediator of a kind not listed is ignored",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: snrKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt}}
			},
			missing:    []string{"no " + farKind + " for the node"},
			notMissing: []string{snrKind},
			sources:    []string{farKind},
		},
		{
			name: "fenced remediator with no remediator listed is ignored",
			mutate: func(o *Observation) {
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt}}
			},
			missing: []string{"no node.kubernetes.io/out-of-service taint"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "one fenced CR of a listed kind is enough",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				withFAR(o)
				o.Evidence.Remediators = []RemediatorCR{
					{Kind: farKind, Name: testNode + "-old"},
					{Kind: farKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt},
				}
			},
			open:     true,
			evidence: []string{farKind + "/" + testNode},
		},

		// Delegate.
		{
			name: "delegate fenced alone opens",
			mutate: func(o *Observation) {
				withDelegate(o)
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, CreatedAt: testFencedAt}
			},
			open:     true,
			evidence: []string{"delegate " + delegated + "/" + testNode},
		},
		{
			name: "delegate not created yet",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				withDelegate(o)
			},
			missing: []string{"delegate fencing CR not created yet"},
			sources: []string{"Delegate"},
		},
		{
			name: "delegate created but not fenced",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				withDelegate(o)
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode}
			},
			missing: []string{"delegate " + delegated + "/" + testNode + " has no " + farCond + "=True"},
			sources: []string{"Delegate"},
		},
		{
			name: "delegate error, even with a fenced delegate CR",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				withDelegate(o)
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, CreatedAt: testFencedAt}
				o.Evidence.DelegateError = "template ipmi not found"
			},
			missing: []string{"delegate: template ipmi not found"},
			sources: []string{"Delegate"},
		},
		{
			name: "fenced delegate CR ignored when no delegate is configured",
			mutate: func(o *Observation) {
				withoutDefaultSources(o)
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: true, CreatedAt: testFencedAt}
			},
		},

		// Storage isolation.
		{
			name:     "storage isolation alone opens",
			mutate:   func(o *Observation) { o.Evidence.LonghornNode = longhornDown },
			open:     true,
			evidence: []string{EvidenceStorageIsolation},
		},
		{
			name: "storage isolation over several targets and volumes, released ones included",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				o.Targets = append(o.Targets, recordedTarget("s3gw-1", attachedVolume("b"), releasedVolume("c")))
			},
			open:     true,
			evidence: []string{EvidenceStorageIsolation},
		},
		{
			name: "storage isolation ignored when the source is disabled",
			mutate: func(o *Observation) {
				o.Spec.Fencing.StorageIsolation = ptr.To(false)
				o.Evidence.LonghornNode = longhornDown
			},
			missing:    []string{"no node.kubernetes.io/out-of-service taint"},
			notMissing: []string{"storage isolation"},
			sources:    []string{EvidenceOutOfServiceTaint},
		},
		{
			name: "storage isolation fails without Longhorn",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				o.LonghornAvailable = false
			},
			missing: []string{"storage isolation: Longhorn is not installed"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name:    "storage isolation fails when Longhorn does not report the node down",
			missing: []string{"storage isolation: Longhorn does not report the node down"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with a replica on the failed node",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				v := attachedVolume("b")
				v.Replicas = append(v.Replicas, replicaOn(v.LonghornVolume, testNode))
				o.Targets = append(o.Targets, recordedTarget("s3gw-1", v))
			},
			missing: []string{"storage isolation: replica pvc-b-r-worker-1 of pvc-b is on the node"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with a replica on the node of a released volume",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				v := releasedVolume("b")
				v.Replicas = append(v.Replicas, replicaOn(v.LonghornVolume, testNode))
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, v)
			},
			missing: []string{"storage isolation: replica pvc-b-r-worker-1 of pvc-b is on the node"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with a skipped volume among the targets",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				o.Targets = append(o.Targets, recordedTarget("s3gw-1", skippedVolume("nfs")))
			},
			missing: []string{"storage isolation: volume data-nfs is not a Longhorn RWO volume"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with targets but no volumes",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				o.Targets = []Target{recordedTarget("s3gw-0"), recordedTarget("s3gw-1")}
			},
			missing: []string{"storage isolation: no Longhorn volume to isolate"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with no targets",
			mutate: func(o *Observation) {
				o.Evidence.LonghornNode = longhornDown
				o.Targets = nil
			},
			missing: []string{"storage isolation: no Longhorn volume to isolate"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},

		// Several sources.
		{
			name: "every source holding is listed as evidence",
			mutate: func(o *Observation) {
				withFAR(o)
				withDelegate(o)
				o.Node.OutOfServiceTaint = freshTaint()
				o.Evidence.LonghornNode = longhornDown
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt}}
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode + "-fence", Fenced: true, CreatedAt: testFencedAt}
			},
			open: true,
			evidence: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation,
				farKind + "/" + testNode, "delegate " + delegated + "/" + testNode + "-fence"},
		},
		{
			name: "one source holding opens although the others are missing",
			mutate: func(o *Observation) {
				withFAR(o)
				withDelegate(o)
				o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt}}
				o.Evidence.DelegateError = "template ipmi not found"
			},
			open:     true,
			evidence: []string{farKind + "/" + testNode},
		},
		{
			name: "Missing names every enabled source that does not hold",
			mutate: func(o *Observation) {
				withFAR(o)
				withDelegate(o)
				o.Node.OutOfServiceTaint = ourTaint()
				v := attachedVolume("b")
				v.Replicas = append(v.Replicas, replicaOn(v.LonghornVolume, testNode))
				o.Targets = []Target{recordedTarget("s3gw-0", v)}
				o.Evidence.LonghornNode = longhornDown
				o.Evidence.Remediators = []RemediatorCR{
					{Kind: farKind, Name: testNode},
					{Kind: snrKind, Name: testNode, Fenced: true, CreatedAt: testFencedAt},
				}
				o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode + "-fence"}
			},
			missing: []string{
				"no node.kubernetes.io/out-of-service taint",
				"storage isolation: replica pvc-b-r-worker-1 of pvc-b is on the node",
				farKind + "/" + testNode + " has no " + farCond + "=True",
				"delegate " + delegated + "/" + testNode + "-fence has no " + farCond + "=True",
			},
			notMissing: []string{snrKind},
			sources:    []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation, farKind, "Delegate"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := notFenced()
			if tt.mutate != nil {
				tt.mutate(&o)
			}

			gate := EvaluateGate(o)

			g.Expect(gate.Open).To(Equal(tt.open), "open; missing: %q", gate.Missing)
			g.Expect(gate.Disabled).To(Equal(tt.disabled))
			expectStrings(g, gate.Evidence, tt.evidence)
			expectStrings(g, gate.MissingSources, tt.sources)
			if tt.open {
				g.Expect(gate.Missing).To(BeEmpty())
			}
			for _, m := range tt.missing {
				g.Expect(gate.Missing).To(ContainSubstring(m))
			}
			for _, m := range tt.notMissing {
				g.Expect(gate.Missing).NotTo(ContainSubstring(m))
			}
		})
	}
}

// expectStrings compares exactly, treating nil and empty alike.
func expectStrings(g *WithT, actual, want []string) {
	g.THelper()
	if len(want) == 0 {
		g.Expect(actual).To(BeEmpty())
		return
	}
	g.Expect(actual).To(Equal(want))
}

// TestEvaluateGateMissingSourcesBounded checks that MissingSources only ever
// names sources (never CR names, volume names or error texts), so it is safe
// as a metric label.
func TestEvaluateGateMissingSourcesBounded(t *testing.T) {
	g := NewWithT(t)
	o := notFenced()
	withFAR(&o)
	withDelegate(&o)
	o.Spec.Fencing.Remediators = append(o.Spec.Fencing.Remediators,
		s3gwv1alpha1.RemediatorEvidence{APIVersion: "self-node-remediation.medik8s.io/v1alpha1", Kind: snrKind, ConditionType: "Succeeded"})
	allowed := []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation, farKind, snrKind, "Delegate"}

	variants := []func(o *Observation){
		func(o *Observation) {},
		func(o *Observation) {
			o.Evidence.Remediators = []RemediatorCR{{Kind: farKind, Name: "far-a"}, {Kind: snrKind, Name: "snr-b"}}
			o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: "delegate-c"}
		},
		func(o *Observation) {
			o.LonghornAvailable = false
			o.Evidence.DelegateError = "some free-form error text"
		},
		func(o *Observation) {
			o.Evidence.LonghornNode = longhornDown
			o.Targets = []Target{recordedTarget("s3gw-0", skippedVolume("x"))}
		},
	}
	for _, mutate := range variants {
		c := o
		mutate(&c)
		gate := EvaluateGate(c)
		g.Expect(gate.Open).To(BeFalse())
		g.Expect(gate.MissingSources).To(ConsistOf(allowed))
		g.Expect(gate.Missing).NotTo(BeEmpty())
	}
}
