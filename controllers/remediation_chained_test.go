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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

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
		rem := s.w.remediation(s.key)
		controllerutil.AddFinalizer(rem, Finalizer)
		Expect(managerClient.Update(s.w.ctx, rem)).To(Succeed())
		before := s.w.remediation(s.key) // the finalizer, no targets
		st := s.w.stepper(managerClient)
		Expect(st.pass(s.key)).To(Succeed())
		Expect(s.w.remediation(s.key).Status.Targets).To(HaveLen(1))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(), "the replicas' stops are not confirmed yet")

		st.r.Client = staleCopy{Client: managerClient, kept: before}
		Expect(st.pass(s.key)).To(Succeed())
		Expect(s.w.podExists(s.g.pod)).To(BeFalse(),
			"the pass decided on the API's copy, the target recorded and the stops confirmed, not on the old one")
	})

	It("does not act on a copy from before the CR's deletion once its cleanup ran", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
		st := s.w.stepper(managerClient)
		Expect(st.pass(s.key)).To(Succeed())
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(), "the replicas' stops are not confirmed yet")
		// The cache keeps a copy with the target recorded, older than the
		// reconciler's last write; the replicas' stops are confirmed by now.
		old := s.w.remediation(s.key)
		old.ResourceVersion = "1"
		Expect(s.w.c.Delete(s.w.ctx, s.w.remediation(s.key))).To(Succeed(), "NHC deletes the CR; the finalizer holds it")
		st.r.Client = staleCopy{Client: managerClient, kept: old}

		Expect(st.pass(s.key)).To(Succeed())
		Expect(apierrors.IsNotFound(managerClient.Get(s.w.ctx, s.key, &s3gwv1alpha1.S3GWRemediation{}))).To(BeTrue(),
			"the pass read the API's copy and cleaned up")
		Expect(st.pass(s.key)).To(Succeed())
		Expect(s.w.podExists(s.g.pod)).To(BeTrue(), "no pass acts on the cache's copy from before the deletion")
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
		evicted := meta.FindStatusCondition(rem.Status.Conditions, s3gwv1alpha1.ConditionWorkloadEvicted)
		Expect(evicted).To(HaveValue(HaveField("Status", metav1.ConditionTrue)), "%+v", rem.Status)

		// A later Reconcile, the cache still showing the pod, reads it from
		// the API: the target stays evicted.
		s.w.clock.Step(time.Second)
		Expect(st.pass(s.key)).To(Succeed())
		rem = s.w.remediation(s.key)
		Expect(meta.FindStatusCondition(rem.Status.Conditions, s3gwv1alpha1.ConditionWorkloadEvicted)).To(Equal(evicted),
			"the target never went back to evicting")
	})
})

var _ = Describe("A Reconcile that force-deletes a pod", func() {
	// untilGone runs Reconciles until pod is gone and returns the writes of
	// the last one.
	untilGone := func(w *world, st *stepper, recorder *writeRecorder, key types.NamespacedName, pod *corev1.Pod) []write {
		var writes []write
		for range 10 {
			if !w.podExists(pod) {
				break
			}
			n := len(recorder.Writes())
			Expect(st.pass(key)).To(Succeed())
			writes = recorder.Writes()[n:]
		}
		Expect(w.podExists(pod)).To(BeFalse(), "the pod was force-deleted")
		return writes
	}
	statusWrite := func(key types.NamespacedName) write {
		return write{Verb: "patch", Kind: "S3GWRemediation", Name: key.Name, SubResource: "status"}
	}

	It("writes the status once, after the release", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("second", true)
		w.addNode("failed", true)
		g := w.addGateway("s3gw", "failed", "healthy", withReplicasOn("healthy", "second"))
		w.simulate()
		// The replica on "second" stops late: a pass records that the
		// release waits for it.
		w.cutOff[w.nodeName("second")] = true
		w.setReady("failed", false)
		key := w.remediate(w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{
			Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseControllerDetach}}, false)), "failed")
		recorder := newWriteRecorder()
		st := w.stepper(recorder)
		st.until(key, 20, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
			return conditionOf(rem, s3gwv1alpha1.ConditionWorkloadEvicted).Reason == s3gwv1alpha1.ReasonReplicaStopUnconfirmed
		})
		delete(w.cutOff, w.nodeName("second"))

		Expect(untilGone(w, st, recorder, key, g.pod)).To(HaveExactElements(
			write{Verb: "delete", Kind: "Pod", Name: g.pod.Name},
			write{Verb: "patch", Kind: "Node", Name: w.nodeName("failed"), SubResource: "status"},
			statusWrite(key),
		), "the force delete's pass left its status to the release's pass")
		rem := w.remediation(key)
		Expect(rem.Status.Phase).To(Equal(s3gwv1alpha1.PhaseReleasing), "the attachment is still there")
		Expect(conditionOf(rem, s3gwv1alpha1.ConditionWorkloadEvicted).Status).To(Equal(metav1.ConditionTrue))
		Expect(st.eventsWithReason(remediation.EventPodEvicted)).To(HaveLen(2), "one event on the CR, one on the Node")
		Expect(st.eventsWithReason(remediation.EventVolumeUnmarked)).To(HaveLen(2))
	})

	It("tells the transition of the pass whose status it held", func() {
		// Without replica stops to confirm, the pass that judges the
		// evidence force-deletes at once: it leaves Pending and is held.
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseControllerDetach, RequireReachableReplicas: ptr.To(false)}})
		recorder := newWriteRecorder()
		st := s.w.stepper(recorder)
		Expect(untilGone(s.w, st, recorder, s.key, s.g.pod)).To(HaveExactElements(
			write{Verb: "patch", Kind: "S3GWRemediation", Name: s.key.Name}, // the finalizer
			statusWrite(s.key), // the targets, which must persist first
			write{Verb: "delete", Kind: "Pod", Name: s.g.pod.Name},
			write{Verb: "patch", Kind: "Node", Name: s.w.nodeName("failed"), SubResource: "status"},
			statusWrite(s.key),
		))
		for _, phase := range []s3gwv1alpha1.Phase{s3gwv1alpha1.PhasePending, s3gwv1alpha1.PhaseEvicting} {
			Expect(st.metric("s3gw_remediation_phase_duration_seconds", map[string]string{"phase": string(phase)})).To(Equal(1.0),
				"%s was left once: by the held pass, then by the pass that wrote", phase)
		}
		Expect(s.w.remediation(s.key).Status.Phase).To(Equal(s3gwv1alpha1.PhaseReleasing))
	})
})

var _ = Describe("A chain of passes", func() {
	It("ends when a status write fails: nothing is written after it in that Reconcile", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
			Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseControllerDetach}})
		recorder := newWriteRecorder()
		failed := false
		recorder.inject = func(w write) error {
			if w.SubResource == "status" && !failed {
				failed = true
				return apierrors.NewServiceUnavailable("the API server is restarting")
			}
			return nil
		}
		st := s.w.stepper(recorder)
		Expect(st.pass(s.key)).NotTo(Succeed(), "the record pass's status write failed")
		// The failed status write is the Reconcile's last write and its only
		// status write: no pass followed it.
		writes := recorder.Writes()
		Expect(writes).NotTo(BeEmpty())
		Expect(writes[len(writes)-1].SubResource).To(Equal("status"), "%v", writes)
		Expect(writes[:len(writes)-1]).NotTo(ContainElement(HaveField("SubResource", "status")), "%v", writes)
		Expect(s.w.remediation(s.key).Status.Targets).To(BeEmpty(), "no target was recorded")

		// The next Reconcile records the targets again and goes on.
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool { return !s.w.podExists(s.g.pod) })
		Expect(s.w.remediation(s.key).Status.Targets).To(HaveLen(1))
	})
})

// lostPodDeletes answers every pod delete with success and drops it, as a
// mutating admission plugin or an aggregated API server might; after ten
// it refuses, so a chain without end fails instead of hanging.
type lostPodDeletes struct {
	client.Client
	n *int
}

func (c lostPodDeletes) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if _, ok := obj.(*corev1.Pod); !ok {
		return c.Client.Delete(ctx, obj, opts...)
	}
	if *c.n++; *c.n > 10 {
		return apierrors.NewTooManyRequestsError("ten pod deletes")
	}
	return nil
}

var _ = Describe("A chain of passes on a pod still there after its force delete", func() {
	It("stops after three passes and waits for the next Reconcile", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{
			Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseControllerDetach}})
		st := s.w.stepper(managerClient)
		deletes := 0
		st.r.Client = lostPodDeletes{Client: managerClient, n: &deletes}
		st.until(s.key, 10, func(*s3gwv1alpha1.S3GWRemediation) bool { return deletes > 0 })
		Expect(deletes).To(Equal(3), "one force delete per pass, three passes back to back")
		Expect(s.w.podExists(s.g.pod)).To(BeTrue())
		Expect(s.w.node("failed").Status.VolumesInUse).To(ContainElement(longhorn.UniqueVolumeName(s.g.pv)),
			"nothing is released while the pod is in the API")
	})
})
