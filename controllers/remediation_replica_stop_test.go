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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
)

var _ = Describe("The release in two steps", func() {
	It("removes Longhorn's ticket first, and force-deletes and releases only once each replica's instance manager shows it stopped", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("second", true)
		w.addNode("failed", true)
		g := w.addGateway("s3gw", "failed", "healthy", withReplicasOn("healthy", "second"))
		w.simulate() // the instance managers list the running replicas
		// Node "second" lost the API server a moment ago: its kubelet Lease
		// and Longhorn Node still look healthy, but its manager records
		// nothing, so its instance manager still lists the replica running.
		w.cutOff[w.nodeName("second")] = true
		w.setReady("failed", false)
		key := w.remediate(w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false)), "failed")
		st := w.stepper(managerClient)
		failedTicket := attachrules.AttachmentName(g.pv, w.nodeName("failed"))

		st.until(key, 20, func(*s3gwv1alpha1.S3GWRemediation) bool { return w.tickets(g)[failedTicket] == nil })
		for range 3 {
			Expect(st.pass(key)).To(Succeed())
		}

		Expect(w.podExists(g.pod)).To(BeTrue(), "the old pod stays: deleted, it would start the attach-detach controller's 6-minute force detach")
		Expect(w.attachments(g, w.nodeName("failed"))).To(HaveLen(1), "the Kubernetes VolumeAttachment holds the replacement off")
		Expect(attachments.InUse(w.node("failed"), g.pv)).To(BeTrue(), "volumesInUse is left alone")
		rem := w.remediation(key)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseEvicting))
		released := conditionOf(rem, s3gwv1alpha1.ConditionWorkloadEvicted)
		Expect(released.Status).To(Equal(metav1.ConditionFalse))
		Expect(released.Reason).To(Equal(s3gwv1alpha1.ReasonReplicaStopUnconfirmed))
		Expect(released.Message).To(ContainSubstring("instance manager instance-manager-%s on %s still lists replica %s-r-1 running",
			w.nodeName("second"), w.nodeName("second"), g.pv))
		Expect(st.eventsWithReason(attachments.EventLonghornTicketRemoved)).To(HaveLen(2), "one event on the CR, one on the Node")

		delete(w.cutOff, w.nodeName("second")) // its manager stops the replica and records it
		st.until(key, 20, succeeded)
		Expect(w.podExists(g.pod)).To(BeFalse(), "force-deleted once every replica is proven stopped")
		Expect(w.attachments(g, w.nodeName("failed"))).To(BeEmpty())
		Expect(w.attachments(g, w.nodeName("healthy"))).To(HaveLen(1), "the replacement attached")
		Expect(st.eventsWithReason(attachments.EventLonghornTicketRemoved)).To(HaveLen(2), "the ticket is removed once")
	})
})
