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

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

func TestExcludedFromRemediation(t *testing.T) {
	tests := []struct {
		labels map[string]string
		want   bool
	}{
		{labels: nil},
		{labels: map[string]string{failover.ExcludeFromRemediationLabel: "true"}, want: true},
		{labels: map[string]string{failover.ExcludeFromRemediationLabel: ""}},
		{labels: map[string]string{failover.ExcludeFromRemediationLabel: "false"}},
		{labels: map[string]string{failover.ExcludeFromRemediationLabel: "True"}},
	}
	for _, tt := range tests {
		NewWithT(t).Expect(failover.ExcludedFromRemediation(tt.labels)).To(Equal(tt.want), "%v", tt.labels)
	}
}

// TestDecideExcludedNode pins the exclude label, read on every step: it
// holds every step the node is not past yet, and undoes nothing.
func TestDecideExcludedNode(t *testing.T) {
	tests := []struct {
		name                  string
		obs                   func() failover.State
		mutate                func(o *failover.State)
		phase                 s3gwv1alpha1.Phase
		processing, succeeded metav1.ConditionStatus
		reason                string
	}{
		{
			name: "fenced, with a pod to evict: nothing is evicted or released", obs: fixture.Fenced,
			phase: s3gwv1alpha1.PhaseExcluded, reason: s3gwv1alpha1.ReasonExcludedFromRemediation,
			processing: metav1.ConditionFalse, succeeded: metav1.ConditionUnknown,
		},
		{
			name: "no evidence yet: no delegate is created", obs: fixture.NotFenced,
			mutate: func(o *failover.State) { fixture.WithoutDefaultSources(o); fixture.WithDelegate(o) },
			phase:  s3gwv1alpha1.PhaseExcluded, reason: s3gwv1alpha1.ReasonExcludedFromRemediation,
			processing: metav1.ConditionFalse, succeeded: metav1.ConditionUnknown,
		},
		{
			name: "targets not recorded yet: none is recorded", obs: fixture.Fenced,
			mutate: func(o *failover.State) { o.Targets[0].Recorded = false },
			phase:  s3gwv1alpha1.PhaseExcluded, reason: s3gwv1alpha1.ReasonExcludedFromRemediation,
			processing: metav1.ConditionFalse, succeeded: metav1.ConditionUnknown,
		},
		{
			name: "a new failure of an excluded node does not start over", obs: fixture.Fenced,
			mutate: failedAgain,
			phase:  s3gwv1alpha1.PhaseExcluded, reason: s3gwv1alpha1.ReasonExcludedFromRemediation,
			processing: metav1.ConditionFalse, succeeded: metav1.ConditionUnknown,
		},
		{
			name: "a reported success is kept", obs: fixture.Fenced,
			mutate: func(o *failover.State) { o.Succeeded = true },
			phase:  s3gwv1alpha1.PhaseSucceeded,
		},
		{
			name: "NHC's time-out still stops it", obs: fixture.Fenced,
			mutate: func(o *failover.State) { o.TimedOut = true },
			phase:  s3gwv1alpha1.PhaseStopped, reason: s3gwv1alpha1.ReasonRemediationStoppedByNHC,
			processing: metav1.ConditionFalse, succeeded: metav1.ConditionFalse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := tt.obs()
			o.Node.Excluded = true
			if tt.mutate != nil {
				tt.mutate(&o)
			}

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(tt.phase))
			g.Expect(d.Destructive()).To(BeFalse())
			g.Expect(writesOf(d)).To(Equal(writes{}), "nothing is written but status")
			g.Expect(d.RestartEpisode).To(BeNil())
			g.Expect(d.Does(failover.DeleteFencer)).To(BeFalse())
			if tt.reason == "" {
				g.Expect(Conditions(o, d)).To(BeEmpty())
				return
			}
			expectConditions(g, Conditions(o, d),
				cond{s3gwv1alpha1.ConditionProcessing, tt.processing, tt.reason},
				cond{s3gwv1alpha1.ConditionSucceeded, tt.succeeded, tt.reason})
			if tt.phase == s3gwv1alpha1.PhaseExcluded {
				g.Expect(d.Message).To(ContainSubstring(failover.ExcludeFromRemediationLabel + "=true"))
				g.Expect(Conditions(o, d)).NotTo(ContainElement(HaveField("Type", s3gwv1alpha1.ConditionWorkloadSelectorValid)))
			}
		})
	}
	t.Run("without the label the same observation acts", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(Decide(fixture.Fenced()).Destructive()).To(BeTrue())
	})
}
