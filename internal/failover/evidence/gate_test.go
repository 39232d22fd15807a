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

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

func TestEvaluateGate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(o *failover.State)
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
			mutate: func(o *failover.State) {
				o.Node = nil
				o.Evidence.LonghornNode = failover.LonghornDown
			},
			missing: []string{"the node does not exist"},
		},
		{
			name: "node missing in Disabled mode",
			mutate: func(o *failover.State) {
				o.Node = nil
				o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
			},
			missing: []string{"the node does not exist"},
		},
		{
			name: "node Ready, even with every source holding",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				fixture.WithDelegate(o)
				o.Node.Ready = true
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}
			},
			missing: []string{"node worker-1 is Ready"},
		},
		{
			name:     "Disabled mode opens without evidence",
			mutate:   func(o *failover.State) { o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled },
			open:     true,
			disabled: true,
			evidence: []string{EvidenceFencingDisabled},
		},
		{
			name: "Disabled mode with every source disabled and Longhorn missing",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
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
			mutate: func(o *failover.State) {
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
			mutate:  func(o *failover.State) { o.Spec.Fencing.Mode = "" },
			missing: []string{"no node.kubernetes.io/out-of-service taint"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "no source enabled never opens",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}
			},
		},

		// Out-of-service taint.
		{
			name:     "foreign out-of-service taint alone opens",
			mutate:   func(o *failover.State) { o.Node.OutOfServiceTaint = fixture.FreshTaint() },
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name: "foreign out-of-service taint with the source explicitly enabled",
			mutate: func(o *failover.State) {
				o.Spec.Fencing.OutOfServiceTaint = ptr.To(true)
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
			},
			open:     true,
			evidence: []string{EvidenceOutOfServiceTaint},
		},
		{
			name:    "our own out-of-service taint is never evidence",
			mutate:  func(o *failover.State) { o.Node.OutOfServiceTaint = fixture.OurTaint() },
			missing: []string{"no node.kubernetes.io/out-of-service taint"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "foreign out-of-service taint ignored when the source is disabled",
			mutate: func(o *failover.State) {
				o.Spec.Fencing.OutOfServiceTaint = ptr.To(false)
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
			},
			missing:    []string{"storage isolation: Longhorn does not report the node down"},
			notMissing: []string{"out-of-service"},
			sources:    []string{EvidenceStorageIsolation},
		},

		// Listed remediators.
		{
			name: "listed remediator CR fenced alone opens",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
			},
			open:     true,
			evidence: []string{fixture.FARKind + "/" + fixture.NodeName},
		},
		{
			name: "listed remediator opens with the default sources disabled",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
			},
			open:     true,
			evidence: []string{fixture.FARKind + "/" + fixture.NodeName},
		},
		{
			name: "listed remediator CR present but not fenced",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: fixture.NodeName}}
			},
			missing: []string{fixture.FARKind + "/" + fixture.NodeName + " has no " + fixture.FARCondition + "=True"},
			sources: []string{fixture.FARKind},
		},
		{
			name: "listed remediator CR absent",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				fixture.WithFAR(o)
			},
			missing: []string{"no " + fixture.FARKind + " for the node"},
			sources: []string{fixture.FARKind},
		},
		{
			name: "fenced remediator of a kind not listed is ignored",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.SNRKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
			},
			missing:    []string{"no " + fixture.FARKind + " for the node"},
			notMissing: []string{fixture.SNRKind},
			sources:    []string{fixture.FARKind},
		},
		{
			name: "fenced remediator with no remediator listed is ignored",
			mutate: func(o *failover.State) {
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
			},
			missing: []string{"no node.kubernetes.io/out-of-service taint"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "one fenced CR of a listed kind is enough",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				fixture.WithFAR(o)
				o.Evidence.Remediators = []failover.RemediatorCR{
					{Kind: fixture.FARKind, Name: fixture.NodeName + "-old"},
					{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt},
				}
			},
			open:     true,
			evidence: []string{fixture.FARKind + "/" + fixture.NodeName},
		},

		// Delegate.
		{
			name: "delegate fenced alone opens",
			mutate: func(o *failover.State) {
				fixture.WithDelegate(o)
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}
			},
			open:     true,
			evidence: []string{"delegate " + fixture.DelegateKind + "/" + fixture.NodeName},
		},
		{
			name: "delegate not created yet",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				fixture.WithDelegate(o)
			},
			missing: []string{"delegate fencing CR not created yet"},
			sources: []string{"Delegate"},
		},
		{
			name: "delegate created but not fenced",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				fixture.WithDelegate(o)
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName}
			},
			missing: []string{"delegate " + fixture.DelegateKind + "/" + fixture.NodeName + " has no " + fixture.FARCondition + "=True"},
			sources: []string{"Delegate"},
		},
		{
			name: "delegate error, even with a fenced delegate CR",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				fixture.WithDelegate(o)
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}
				o.Evidence.DelegateError = "template ipmi not found"
			},
			missing: []string{"delegate: template ipmi not found"},
			sources: []string{"Delegate"},
		},
		{
			name: "fenced delegate CR ignored when no delegate is configured",
			mutate: func(o *failover.State) {
				fixture.WithoutDefaultSources(o)
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}
			},
		},

		// Storage isolation.
		{
			name:     "storage isolation alone opens",
			mutate:   func(o *failover.State) { o.Evidence.LonghornNode = failover.LonghornDown },
			open:     true,
			evidence: []string{EvidenceStorageIsolation},
		},
		{
			name: "storage isolation over several targets and volumes, released ones included",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Targets = append(o.Targets, fixture.RecordedTarget("s3gw-1", fixture.AttachedVolume("b"), fixture.ReleasedVolume("c")))
			},
			open:     true,
			evidence: []string{EvidenceStorageIsolation},
		},
		{
			name: "storage isolation ignored when the source is disabled",
			mutate: func(o *failover.State) {
				o.Spec.Fencing.StorageIsolation = ptr.To(false)
				o.Evidence.LonghornNode = failover.LonghornDown
			},
			missing:    []string{"no node.kubernetes.io/out-of-service taint"},
			notMissing: []string{"storage isolation"},
			sources:    []string{EvidenceOutOfServiceTaint},
		},
		{
			name: "storage isolation fails without Longhorn",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
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
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				v := fixture.AttachedVolume("b")
				v.Replicas = append(v.Replicas, fixture.ReplicaOn(v.LonghornVolume, fixture.NodeName))
				o.Targets = append(o.Targets, fixture.RecordedTarget("s3gw-1", v))
			},
			missing: []string{"storage isolation: replica pvc-b-r-worker-1 of pvc-b is on the node"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with a replica on the node of a released volume",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				v := fixture.ReleasedVolume("b")
				v.Replicas = append(v.Replicas, fixture.ReplicaOn(v.LonghornVolume, fixture.NodeName))
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, v)
			},
			missing: []string{"storage isolation: replica pvc-b-r-worker-1 of pvc-b is on the node"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with a skipped volume among the targets",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Targets = append(o.Targets, fixture.RecordedTarget("s3gw-1", fixture.SkippedVolume("nfs")))
			},
			missing: []string{"storage isolation: volume data-nfs is not a Longhorn RWO volume"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with targets but no volumes",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Targets = []failover.Target{fixture.RecordedTarget("s3gw-0"), fixture.RecordedTarget("s3gw-1")}
			},
			missing: []string{"storage isolation: no Longhorn volume to isolate"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},
		{
			name: "storage isolation fails with no targets",
			mutate: func(o *failover.State) {
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Targets = nil
			},
			missing: []string{"storage isolation: no Longhorn volume to isolate"},
			sources: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation},
		},

		// Several sources.
		{
			name: "every source holding is listed as evidence",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				fixture.WithDelegate(o)
				o.Node.OutOfServiceTaint = fixture.FreshTaint()
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName + "-fence", Fenced: true, CreatedAt: fixture.FencedAt}
			},
			open: true,
			evidence: []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation,
				fixture.FARKind + "/" + fixture.NodeName, "delegate " + fixture.DelegateKind + "/" + fixture.NodeName + "-fence"},
		},
		{
			name: "one source holding opens although the others are missing",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				fixture.WithDelegate(o)
				o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt}}
				o.Evidence.DelegateError = "template ipmi not found"
			},
			open:     true,
			evidence: []string{fixture.FARKind + "/" + fixture.NodeName},
		},
		{
			name: "Missing names every enabled source that does not hold",
			mutate: func(o *failover.State) {
				fixture.WithFAR(o)
				fixture.WithDelegate(o)
				o.Node.OutOfServiceTaint = fixture.OurTaint()
				v := fixture.AttachedVolume("b")
				v.Replicas = append(v.Replicas, fixture.ReplicaOn(v.LonghornVolume, fixture.NodeName))
				o.Targets = []failover.Target{fixture.RecordedTarget("s3gw-0", v)}
				o.Evidence.LonghornNode = failover.LonghornDown
				o.Evidence.Remediators = []failover.RemediatorCR{
					{Kind: fixture.FARKind, Name: fixture.NodeName},
					{Kind: fixture.SNRKind, Name: fixture.NodeName, Fenced: true, CreatedAt: fixture.FencedAt},
				}
				o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: fixture.NodeName + "-fence"}
			},
			missing: []string{
				"no node.kubernetes.io/out-of-service taint",
				"storage isolation: replica pvc-b-r-worker-1 of pvc-b is on the node",
				fixture.FARKind + "/" + fixture.NodeName + " has no " + fixture.FARCondition + "=True",
				"delegate " + fixture.DelegateKind + "/" + fixture.NodeName + "-fence has no " + fixture.FARCondition + "=True",
			},
			notMissing: []string{fixture.SNRKind},
			sources:    []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation, fixture.FARKind, "Delegate"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.NotFenced()
			if tt.mutate != nil {
				tt.mutate(&o)
			}

			gate := Evaluate(o)

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
	o := fixture.NotFenced()
	fixture.WithFAR(&o)
	fixture.WithDelegate(&o)
	o.Spec.Fencing.Remediators = append(o.Spec.Fencing.Remediators,
		s3gwv1alpha1.RemediatorEvidence{APIVersion: "self-node-remediation.medik8s.io/v1alpha1", Kind: fixture.SNRKind, ConditionType: "Succeeded"})
	allowed := []string{EvidenceOutOfServiceTaint, EvidenceStorageIsolation, fixture.FARKind, fixture.SNRKind, "Delegate"}

	variants := []func(o *failover.State){
		func(o *failover.State) {},
		func(o *failover.State) {
			o.Evidence.Remediators = []failover.RemediatorCR{{Kind: fixture.FARKind, Name: "far-a"}, {Kind: fixture.SNRKind, Name: "snr-b"}}
			o.Evidence.Delegate = &failover.RemediatorCR{Kind: fixture.DelegateKind, Name: "delegate-c"}
		},
		func(o *failover.State) {
			o.LonghornAvailable = false
			o.Evidence.DelegateError = "some free-form error text"
		},
		func(o *failover.State) {
			o.Evidence.LonghornNode = failover.LonghornDown
			o.Targets = []failover.Target{fixture.RecordedTarget("s3gw-0", fixture.SkippedVolume("x"))}
		},
	}
	for _, mutate := range variants {
		c := o
		mutate(&c)
		gate := Evaluate(c)
		g.Expect(gate.Open).To(BeFalse())
		g.Expect(gate.MissingSources).To(ConsistOf(allowed))
		g.Expect(gate.Missing).NotTo(BeEmpty())
	}
}
