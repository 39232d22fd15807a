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

package controllers

import (
	"github.com/medik8s/common/pkg/annotations"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
)

var _ = Describe("Two remediations of one node", func() {
	It("never move a pod both select under different rules: both wait and say why, until one goes", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		g := w.addGateway("s3gw", "failed", "healthy", noStorageIsolation)
		w.setReady("failed", false)
		// NHC's remediation waits for FAR's fence. A second one for the node
		// would act at once: NHC's node lease keeps a second
		// NodeHealthCheck from creating it ("node lease is already taken"),
		// so it comes from elsewhere (an admin, another tool).
		strictKey := w.remediate(w.nhc(w.template("strict", s3gwv1alpha1.S3GWRemediationSpec{
			Fencing: s3gwv1alpha1.FencingSpec{Remediators: farEvidence()}}, true)), "failed")
		lax := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{GenerateName: w.nodeName("failed") + "-", Namespace: w.ns,
			Annotations: map[string]string{annotations.NodeNameAnnotation: w.nodeName("failed")}},
			Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeDisabled}}}
		Expect(w.c.Create(w.ctx, lax)).To(Succeed())
		laxKey := client.ObjectKeyFromObject(lax)

		recorder := newWriteRecorder()
		st := w.stepper(recorder)
		for range 3 {
			Expect(st.pass(laxKey)).To(Succeed())
			Expect(st.pass(strictKey)).To(Succeed())
		}
		for key, other := range map[*s3gwv1alpha1.S3GWRemediation]*s3gwv1alpha1.S3GWRemediation{
			w.remediation(laxKey): w.remediation(strictKey), w.remediation(strictKey): w.remediation(laxKey)} {
			Expect(key.Status.Phase).To(Equal(s3gwv1alpha1.PhasePending))
			Expect(key.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse,
				s3gwv1alpha1.ReasonConflictingRemediations))
			Expect(conditionOf(key, s3gwv1alpha1.ConditionSucceeded).Message).To(ContainSubstring(
				"S3GWRemediation " + other.Namespace + "/" + other.Name + " also selects " +
					g.pod.Namespace + "/" + g.pod.Name + " under different rules (fencing.mode)"))
		}
		Expect(recorder.Writes()).To(HaveEach(HaveField("Kind", "S3GWRemediation")), "neither touched the node or the pod")
		Expect(w.podExists(g.pod)).To(BeTrue())
		Expect(w.attachments(g, w.nodeName("failed"))).To(HaveLen(1))
		Expect(st.eventsWithReason(remediation.EventConflictingRemediations)).To(HaveLen(2), "one warning each, not one per pass")

		// The lax NodeHealthCheck goes, and its CR with it: the strict rules
		// alone govern, and FAR's fence moves s3gw.
		Expect(w.c.Delete(w.ctx, w.remediation(laxKey))).To(Succeed())
		Expect(st.pass(laxKey)).To(Succeed())
		far := w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionFalse)
		Expect(st.pass(strictKey)).To(Succeed())
		w.setCondition(far, "FenceAgentActionSucceeded", metav1.ConditionTrue)
		st.until(strictKey, 20, completed)
		Expect(w.remediation(strictKey).Status.FencingEvidence).To(ConsistOf(farKind + "/" + w.ns + "/" + w.nodeName("failed")))
		Expect(w.podExists(g.pod)).To(BeFalse())
	})
})
