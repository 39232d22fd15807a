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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

func revisionCounterOff(o *failover.State) { o.Targets[0].Volumes[0].RevisionCounterDisabled = true }

func acceptStaleReads(o *failover.State) {
	o.Spec.Release.AcceptStaleReadsWithoutRevisionCounter = true
}

// TestDecideRevisionCounter: a volume whose revision counter is disabled
// is never released, whatever the evidence, unless the spec accepts stale
// reads; the remediation fails at once, without fencing, so that NHC
// escalates.
func TestDecideRevisionCounter(t *testing.T) {
	tests := []struct {
		name   string
		o      func() failover.State
		mutate []func(o *failover.State)
		phase  s3gwv1alpha1.Phase
		// refused: the decision fails with RevisionCounterDisabled.
		refused bool
	}{
		{"fenced by FAR: refused", fixture.FencedByFAR, []func(*failover.State){revisionCounterOff},
			s3gwv1alpha1.PhaseFailed, true},
		{"storage isolation: refused", fixture.FencedByIsolation, []func(*failover.State){revisionCounterOff},
			s3gwv1alpha1.PhaseFailed, true},
		{"no evidence yet: refused before any fencing is asked for", fixture.NotFenced,
			[]func(*failover.State){revisionCounterOff, fixture.WithDelegate}, s3gwv1alpha1.PhaseFailed, true},
		{"fencing disabled: still refused", fixture.Fenced, []func(*failover.State){revisionCounterOff, func(o *failover.State) {
			o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
		}}, s3gwv1alpha1.PhaseFailed, true},
		{"the opt-out releases on evidence", fixture.FencedByFAR, []func(*failover.State){revisionCounterOff, acceptStaleReads},
			s3gwv1alpha1.PhaseEvicting, false},
		{"the opt-out does not open the gate", fixture.NotFenced, []func(*failover.State){revisionCounterOff, acceptStaleReads},
			s3gwv1alpha1.PhaseWaitingForFencing, false},
		{"the revision counter enabled: released", fixture.FencedByFAR, nil, s3gwv1alpha1.PhaseEvicting, false},
		{"an already released volume does not matter", fixture.FencedByFAR, []func(*failover.State){fixture.Evicted, func(o *failover.State) {
			o.Targets[0].Volumes[0] = fixture.ReleasedVolume("a")
			o.Targets[0].Volumes[0].RevisionCounterDisabled = true
		}}, s3gwv1alpha1.PhaseWaitingForReplacement, false},
		{"a skipped volume does not matter", fixture.FencedByFAR, []func(*failover.State){func(o *failover.State) {
			o.Targets[0].Volumes = append(o.Targets[0].Volumes, fixture.SkippedVolume("b"))
			o.Targets[0].Volumes[1].RevisionCounterDisabled = true
		}}, s3gwv1alpha1.PhaseEvicting, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := tt.o()
			for _, m := range tt.mutate {
				m(&o)
			}

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(tt.phase))
			if !tt.refused {
				g.Expect(d.Reason).NotTo(Equal(s3gwv1alpha1.ReasonRevisionCounterDisabled))
				return
			}
			g.Expect(d.Destructive()).To(BeFalse())
			g.Expect(d.Does(failover.CreateFencer)).To(BeFalse())
			g.Expect(d.Wait).To(Equal(WaitAfterFailure))
			conds := Conditions(o, d)
			expectConditions(g, conds,
				cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonRevisionCounterDisabled},
				cond{s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionFalse, s3gwv1alpha1.ReasonRevisionCounterDisabled})
			g.Expect(meta.FindStatusCondition(conds, s3gwv1alpha1.ConditionFenced)).To(BeNil(),
				"the gate was not judged, so Fenced is left as it was")
			g.Expect(d.Message).To(ContainSubstring("Longhorn volume pvc-a has the revision counter disabled"))
		})
	}
}

// TestIfNodeFailedRevisionCounter: the protection report names the reason
// and the fix, whatever evidence the spec has.
func TestIfNodeFailedRevisionCounter(t *testing.T) {
	target := runningTarget("worker-2", "worker-3")
	target.Volumes[0].RevisionCounterDisabled = true
	for _, spec := range []s3gwv1alpha1.S3GWRemediationSpec{{}, {Fencing: s3gwv1alpha1.FencingSpec{Delegate: farDelegate()}}} {
		g := NewWithT(t)
		out := IfNodeFailed(outlookObservation(spec, target))
		g.Expect(out.FailsOver).To(BeFalse())
		g.Expect(out.Reason).To(Equal(s3gwv1alpha1.ReasonRevisionCounterDisabled))
		g.Expect(out.Message).To(ContainSubstring("pvc-s3gw has the revision counter disabled"))

		spec.Release.AcceptStaleReadsWithoutRevisionCounter = true
		g.Expect(IfNodeFailed(outlookObservation(spec, target)).FailsOver).To(BeTrue())
	}
	fix, ok := release.VolumeRuleFix(s3gwv1alpha1.ReasonRevisionCounterDisabled)
	g := NewWithT(t)
	g.Expect(ok).To(BeTrue())
	g.Expect(fix).To(And(ContainSubstring(`disableRevisionCounter: "false"`), ContainSubstring("spec.dataSource"),
		ContainSubstring("release.acceptStaleReadsWithoutRevisionCounter: true")))
}
