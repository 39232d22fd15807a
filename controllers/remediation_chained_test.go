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
	"context"
	"reflect"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// staleCopy is a cached client that has not seen kept change: Get answers
// with the copy it kept, whatever the API holds now.
type staleCopy struct {
	client.Client
	kept client.Object
}

func (c staleCopy) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if reflect.TypeOf(obj) == reflect.TypeOf(c.kept) && key == client.ObjectKeyFromObject(c.kept) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.kept.DeepCopyObject()).Elem())
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

var _ = Describe("A pass whose cached CR is older than the reconciler's own last write", func() {
	It("reads the CR from the API and moves on, instead of deciding on the old copy", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
		st := s.w.stepper(managerClient)
		before := s.w.remediation(s.key) // no finalizer, no targets
		Expect(st.pass(s.key)).To(Succeed())
		Expect(s.w.remediation(s.key).Status.Targets).To(HaveLen(1))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(), "the replicas' stops are not confirmed yet")

		st.r.Client = staleCopy{Client: managerClient, kept: before}
		res, err := st.r.Reconcile(s.w.ctx, reconcile.Request{NamespacedName: s.key})
		Expect(err).NotTo(HaveOccurred(), "no write was locked on the old copy's version")
		Expect(res.RequeueAfter).NotTo(Equal(100*time.Millisecond), "no status patch lost its lock")
		Expect(s.w.podExists(s.g.pod)).To(BeFalse(), "the pass decided on the API's copy: the target recorded, the stops confirmed")
	})
})

var _ = Describe("Passes that wait only for their own writes", func() {
	It("record the targets and judge the evidence in one Reconcile", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
		st := s.w.stepper(managerClient)
		Expect(st.pass(s.key)).To(Succeed())
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Targets).To(HaveLen(1), "the first pass recorded the target")
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionFenced, metav1.ConditionTrue, s3gwv1alpha1.ReasonFencingEvidence),
			"the next pass judged the evidence without waiting for the watch event of the status write")
	})

	It("release a volume in the Reconcile that force-deleted its pod, though the cache has not seen the pod go", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
			Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseControllerDetach}})
		st := s.w.stepper(managerClient)
		// The APIReader stays fresh: the pass after the force delete reads
		// the pod from it, as the cache would show it still running.
		st.r.Client = staleCopy{Client: managerClient, kept: s.g.pod.DeepCopy()}
		for range 10 {
			if !s.w.podExists(s.g.pod) {
				break
			}
			Expect(st.eventsWithReason(remediation.EventVolumeUnmarked)).To(BeEmpty(), "nothing is released while the pod is in the API")
			Expect(st.pass(s.key)).To(Succeed())
		}
		Expect(s.w.podExists(s.g.pod)).To(BeFalse(), "the pod was force-deleted")
		Expect(st.eventsWithReason(remediation.EventVolumeUnmarked)).To(HaveLen(2),
			"the Reconcile that force-deleted the pod released its volume: one event on the CR, one on the Node")
		Expect(s.w.node("failed").Status.VolumesInUse).NotTo(ContainElement(longhorn.UniqueVolumeName(s.g.pv)))
		rem := s.w.remediation(s.key)
		Expect(meta.IsStatusConditionTrue(rem.Status.Conditions, s3gwv1alpha1.ConditionWorkloadEvicted)).To(BeTrue(), "%+v", rem.Status)
	})
})
