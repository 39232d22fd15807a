//go:build e2e

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

package e2e

import (
	"time"

	"github.com/medik8s/common/pkg/annotations"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// NHC keeps a node's CR for spec.healthyDelay after the node is healthy
// again; if the node fails once more meanwhile, NHC creates nothing new and
// the kept CR must carry the second failure (node-healthcheck-operator,
// internal/controller/resources/manager.go, HandleHealthyNode and
// calcCrDeletionDelay). NHC's classic node lease makes that CR time out at
// acquireTime + 3 × the remediation duration unless it reports
// Succeeded=True (internal/controller/resources/lease.go, ManageLease and
// isLeaseOverdue), which the emulator reproduces.
var _ = Describe("A node that fails twice under one kept CR", func() {
	It("is remediated both times, the second after NHC's node lease is overdue", func(ctx SpecContext) {
		// The lease is overdue a minute after NHC took it; the CR is kept
		// for three minutes after the node is first healthy again, long
		// enough for the second failure and its remediation.
		const leaseTimeout, healthyDelay = 20 * time.Second, 3 * time.Minute
		s := newScenario(ctx, "twice", 1)
		em, err := env.EnableRemediation(ctx, harness.Remediation{Name: s.name, NodeSelector: map[string]string{poolLabel: s.name},
			LeaseTimeout: leaseTimeout, HealthyDelay: ptr.To(healthyDelay)})
		Expect(err).NotTo(HaveOccurred())

		By("The first failure: NHC creates the CR and s3gw moves")
		first := fail(ctx, s.gateway(ctx, "first", s.victims[0], s.spare))[0]
		Expect(first.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(first.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(first)
		kept := expectMoved(ctx, first, s.spare)

		By("Back, and NHC keeps the CR for its healthyDelay")
		Expect(env.Recover(ctx, first)).To(Succeed())
		Eventually(ctx, func() map[string]string { return remediationFor(ctx, first.Node).GetAnnotations() }).
			WithTimeout(crDeadline).Should(HaveKey(nhc.HealthyDelayAnnotation))
		lease, err := em.Lease(ctx, first.Node)
		Expect(err).NotTo(HaveOccurred())
		overdue := lease.Spec.AcquireTime.Add(3 * leaseTimeout)
		if wait := time.Until(overdue); wait > 0 {
			By("Waiting " + harness.FormatDuration(wait) + " until the node lease is overdue")
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}

		By("The second failure, under the kept CR")
		second := fail(ctx, s.gateway(ctx, "second", s.victims[0], s.spare))[0]
		Expect(second.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		report(second)
		_, newNode := second.Replacement()
		Expect(newNode).To(Equal(s.spare))
		expectAttachedOnlyTo(ctx, second.Gateway, s.spare)
		Eventually(ctx, func() *s3gwv1alpha1.S3GWRemediation { return remediationFor(ctx, second.Node) }).
			WithTimeout(crDeadline).Should(And(
			HaveField("UID", kept.UID),
			HaveField("Status.Targets", ContainElement(And(HaveField("UID", second.OldUID),
				HaveField("State", s3gwv1alpha1.TargetReplaced)))),
			HaveField("Status.Phase", s3gwv1alpha1.PhaseSucceeded),
			HaveField("Status.Conditions", ContainElement(And(HaveField("Type", s3gwv1alpha1.ConditionSucceeded),
				HaveField("Status", metav1.ConditionTrue)))),
		), "the kept CR moved the second gateway")
		Expect(remediationFor(ctx, second.Node).GetAnnotations()).NotTo(HaveKey(annotations.NhcTimedOut),
			"NHC never times out a CR that reports Succeeded=True")

		// The healthyDelay stamp is never removed, so the CR goes healthyDelay
		// after the first recovery. (Not confirmed by hand: NHC's own RBAC,
		// nodes get/list/watch, cannot remove that annotation again, and its
		// CleanUp then never invalidates the lease; the emulator does the same.)
		stamp, err := time.Parse(time.RFC3339, remediationFor(ctx, second.Node).GetAnnotations()[nhc.HealthyDelayAnnotation])
		Expect(err).NotTo(HaveOccurred())
		recoverAndExpectCleanupWithin(ctx, second, em, time.Until(stamp.Add(healthyDelay))+cleanupDeadline)
	}, SpecTimeout(specTimeout))
})
