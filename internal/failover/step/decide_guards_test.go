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
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

// storageIsolated opens the gate by storage isolation alone: Longhorn reports
// the node down and no replica of the target volume lives on it.
func storageIsolated() failover.State {
	o := fixture.NotFenced()
	o.Evidence.LonghornNode = failover.LonghornDown
	return o
}

func fencedConditionOf(o failover.State, d Decision) metav1.Condition {
	for _, c := range Conditions(o, d) {
		if c.Type == s3gwv1alpha1.ConditionFenced {
			return c
		}
	}
	return metav1.Condition{}
}

// TestDecideGuards pins the guards added on top of the gate.
func TestDecideGuards(t *testing.T) {
	t.Run("the out-of-service taint needs proof of shutdown, not only storage isolation", func(t *testing.T) {
		g := NewWithT(t)
		o := storageIsolated()
		o.Targets[0].PodPresent = false
		o.Spec.Release.Strategy = s3gwv1alpha1.ReleaseOutOfServiceTaint
		g.Expect(evidence.Evaluate(o).Open).To(BeTrue())
		d := Decide(o)
		g.Expect(d.Destructive()).To(BeFalse())
		g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
		g.Expect(fencedConditionOf(o, d).Message).To(ContainSubstring("needs proof the node is shut down"))

		o.Spec.Release.Strategy = s3gwv1alpha1.ReleaseControllerDetach
		g.Expect(releasedBy(Decide(o)).Volumes).To(HaveLen(1), "other strategies accept storage isolation")
	})

	t.Run("a finished remediation stays finished", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.Fenced()
		o.Succeeded = true // e.g. the replacement went away after Succeeded=True
		d := Decide(o)
		g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseSucceeded))
		g.Expect(d.Destructive()).To(BeFalse())
		g.Expect(Conditions(o, d)).To(BeEmpty(), "the reported conditions are kept as they are")
		g.Expect(d.Wait).To(Equal(WaitNone))
	})

	t.Run("a pod already force-deleted is not deleted again", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.Fenced()
		o.Targets[0].ForceDeleted = true
		d := Decide(o)
		g.Expect(evictedBy(d)).To(BeEmpty())
		g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseEvicting), "still in the API, kept by finalizers")
	})

	t.Run("a Longhorn volume missing from the configured namespace is reported, not released", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.Fenced()
		o.Spec.Release.LonghornNamespace = "wrong"
		o.Targets[0].Volumes[0].LonghornVolumeMissing = true
		d := Decide(o)
		g.Expect(d.Destructive()).To(BeFalse())
		g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForStorage))
		g.Expect(Conditions(o, d)).To(ContainElement(And(
			HaveField("Type", s3gwv1alpha1.ConditionSucceeded), HaveField("Reason", s3gwv1alpha1.ReasonLonghornUnavailable),
			HaveField("Message", ContainSubstring("check release.longhornNamespace")))))
	})

	t.Run("an invalid delegate shows in the Fenced condition", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.NotFenced()
		fixture.WithDelegate(&o)
		o.Evidence.DelegateError = "template FenceAgentsRemediationTemplate/ipmi not found"
		d := Decide(o)
		g.Expect(d.Does(failover.CreateFencer)).To(BeFalse())
		c := fencedConditionOf(o, d)
		g.Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonInvalidDelegate))
		g.Expect(c.Message).To(ContainSubstring("template FenceAgentsRemediationTemplate/ipmi not found"))
	})
}
