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

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

func TestRulesDiffer(t *testing.T) {
	far := s3gwv1alpha1.RemediatorEvidence{APIVersion: "fence-agents-remediation.medik8s.io/v1alpha1", Kind: fixture.FARKind, ConditionType: fixture.FARCondition}
	snr := s3gwv1alpha1.RemediatorEvidence{APIVersion: "self-node-remediation.medik8s.io/v1alpha1", Kind: fixture.SNRKind}
	tests := []struct {
		name string
		a, b s3gwv1alpha1.S3GWRemediationSpec
		want []string
	}{
		{name: "defaults left out and spelled out are the same rules",
			b: s3gwv1alpha1.S3GWRemediationSpec{
				Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeRequireEvidence, OutOfServiceTaint: ptr.To(true),
					StorageIsolation: ptr.To(true)},
				Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseControllerDetach, RequireReachableReplicas: ptr.To(true),
					LonghornNamespace: "longhorn-system"}}},
		{name: "the selector, namespaces and timeouts choose pods and deadlines, not how a pod moves",
			b: s3gwv1alpha1.S3GWRemediationSpec{Namespaces: []string{"s3gw"},
				WorkloadSelector: &s3gwv1alpha1.LabelSelector{MatchLabels: map[string]s3gwv1alpha1.LabelValue{"app": "other"}},
				ReleaseTimeout:   &metav1.Duration{Duration: 1}}},
		{name: "remediators listed in another order are the same evidence",
			a: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Remediators: []s3gwv1alpha1.RemediatorEvidence{far, snr}}},
			b: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Remediators: []s3gwv1alpha1.RemediatorEvidence{snr, far}}}},
		{name: "fencing disabled on one side: its evidence sources are moot",
			a:    s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Remediators: []s3gwv1alpha1.RemediatorEvidence{far}}},
			b:    s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeDisabled}},
			want: []string{"fencing.mode"}},
		{name: "other evidence and another release",
			a: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Remediators: []s3gwv1alpha1.RemediatorEvidence{far}}},
			b: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false)},
				Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}},
			want: []string{"fencing.storageIsolation", "fencing.remediators", "release.strategy"}},
		{name: "a stale-read opt-out on one side",
			b:    s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{AcceptStaleReadsWithoutRevisionCounter: true}},
			want: []string{"release.acceptStaleReadsWithoutRevisionCounter"}},
		{name: "replicas Longhorn cannot reach accepted on one side",
			b:    s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{RequireReachableReplicas: ptr.To(false)}},
			want: []string{"release.requireReachableReplicas"}},
		{name: "a delegate on one side",
			b: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Delegate: &s3gwv1alpha1.DelegateFencing{
				APIVersion: far.APIVersion, Kind: fixture.DelegateKind + "Template", Name: "ipmi"}}},
			want: []string{"fencing.delegate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(RulesDiffer(tt.a, tt.b)).To(Equal(tt.want))
			g.Expect(RulesDiffer(tt.b, tt.a)).To(Equal(tt.want), "symmetric: both remediations judge alike")
		})
	}
}

// TestDecideSharedTargets pins 3d: two remediations of one node never act
// on the same pod under different rules.
func TestDecideSharedTargets(t *testing.T) {
	lax := s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeDisabled}}
	tests := []struct {
		name   string
		others []failover.OtherRemediation
		// held is true when the step waits for the other remediation.
		held bool
	}{
		{name: "no other remediation: the gate decides"},
		{name: "another remediation of the node with the same rules: the gate decides",
			others: []failover.OtherRemediation{{Name: "ns/other", Spec: s3gwv1alpha1.S3GWRemediationSpec{}, Shared: []string{"ns/s3gw-0"}}}},
		{name: "another remediation with other rules selecting none of the targets: the gate decides",
			others: []failover.OtherRemediation{{Name: "ns/other", Spec: lax}}},
		{name: "another remediation with other rules selecting a target: both wait", held: true,
			others: []failover.OtherRemediation{{Name: "ns/same", Spec: s3gwv1alpha1.S3GWRemediationSpec{}, Shared: []string{"ns/s3gw-0"}},
				{Name: "ns/other", Spec: lax, Shared: []string{"ns/s3gw-0"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.Fenced()
			o.Others = tt.others

			d := Decide(o)

			if !tt.held {
				g.Expect(d.Destructive()).To(BeTrue(), "fenced: the pass acts")
				return
			}
			g.Expect(d.Destructive()).To(BeFalse())
			g.Expect(d.Does(failover.CreateFencer)).To(BeFalse())
			g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhasePending))
			g.Expect(d.Reason).To(Equal(s3gwv1alpha1.ReasonConflictingRemediations))
			g.Expect(d.Message).To(Equal("S3GWRemediation ns/other also selects ns/s3gw-0 under different rules (fencing.mode); " +
				"neither acts until they agree"))
			expectConditions(g, Conditions(o, d),
				cond{s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, s3gwv1alpha1.ReasonConflictingRemediations},
				cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionUnknown, s3gwv1alpha1.ReasonConflictingRemediations})

			// The lax one judges alike: it waits too, whatever its own gate says.
			o.Spec, o.Others = lax, []failover.OtherRemediation{{Name: "ns/strict", Shared: []string{"ns/s3gw-0"}}}
			d = Decide(o)
			g.Expect(d.Destructive()).To(BeFalse())
			g.Expect(d.Reason).To(Equal(s3gwv1alpha1.ReasonConflictingRemediations))
		})
	}
}
