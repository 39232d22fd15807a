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
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
)

var _ = Describe("Remediation resilience", func() {
	It("completes exactly once when the manager restarts before every pass", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}})
		recorder := newWriteRecorder()
		var events []string
		phases := map[s3gwv1alpha1.Phase]bool{}
		for pass := 0; !succeeded(s.w.remediation(s.key)); pass++ {
			Expect(pass).To(BeNumerically("<", 30), "did not converge")
			st := s.w.stepper(recorder) // a fresh reconciler: nothing survives but the API
			Expect(st.pass(s.key)).To(Succeed())
			events = append(events, st.events...)
			phases[s.w.remediation(s.key).Status.Phase] = true
		}
		// Pending is never left between Reconciles: the pass that records
		// the targets chains into the next.
		Expect(phases).To(HaveKey(s3gwv1alpha1.PhaseEvicting))
		s.expectMoved()

		Expect(recorder.Writes("Pod")).To(ConsistOf(write{Verb: "delete", Kind: "Pod", Name: s.g.pod.Name}))
		Expect(recorder.Writes("Node")).To(ConsistOf(HaveField("Verb", "patch")), "the taint is added once")
		count := func(reason string) int {
			n := 0
			for _, e := range events {
				if slices.Contains(strings.Fields(e), reason) {
					n++
				}
			}
			return n
		}
		Expect(count("RemediationStarted")).To(Equal(1))
		Expect(count("RemediationFinished")).To(Equal(1))
		Expect(count(remediation.EventPodEvicted)).To(Equal(2))
	})

	It("converges when every write fails once with a conflict or a server error", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{
			Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}})
		recorder := newWriteRecorder()
		seen := map[string]bool{}
		var mu sync.Mutex
		failures := 0
		recorder.inject = func(w write) error {
			mu.Lock()
			defer mu.Unlock()
			if seen[w.String()] {
				return nil
			}
			seen[w.String()] = true
			failures++
			if failures%2 == 0 {
				return apierrors.NewInternalError(fmt.Errorf("injected for %s", w))
			}
			return apierrors.NewConflict(schema.GroupResource{Resource: w.Kind}, w.Name, fmt.Errorf("injected"))
		}
		st := s.w.stepper(recorder)
		sawError := false
		for pass := 0; !succeeded(s.w.remediation(s.key)); pass++ {
			Expect(pass).To(BeNumerically("<", 60), "did not converge")
			if err := st.pass(s.key); err != nil {
				sawError = true
			}
		}
		Expect(sawError).To(BeTrue())
		Expect(failures).To(BeNumerically(">=", 4), "finalizer, status, pod delete and taint writes all failed once")
		s.expectMoved()
		Expect(s.w.remediation(s.key).Status.LastError).To(BeEmpty(), "cleared by the first clean pass")
	})

	It("moves two s3gw instances off one node", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		a := w.addGateway("tenant-a", "failed", "healthy")
		b := w.addGateway("tenant-b", "failed", "healthy")
		w.setReady("failed", false)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
		key := w.remediate(e, "failed")

		w.stepper(managerClient).until(key, 20, succeeded)
		rem := w.remediation(key)
		Expect(rem.Status.Targets).To(HaveLen(2))
		Expect(rem.Status.Targets).To(HaveEach(HaveField("State", s3gwv1alpha1.TargetReplaced)))
		for _, g := range []*gateway{a, b} {
			Expect(w.podExists(g.pod)).To(BeFalse())
			Expect(w.attachments(g, w.nodeName("failed"))).To(BeEmpty())
		}
	})

	It("handles two failed nodes at once, each CR touching only its node", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed-a", true)
		w.addNode("failed-b", true)
		a := w.addGateway("tenant-a", "failed-a", "healthy")
		b := w.addGateway("tenant-b", "failed-b", "healthy")
		w.setReady("failed-a", false)
		w.setReady("failed-b", false)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, true))
		keyA, keyB := w.remediate(e, "failed-a"), w.remediate(e, "failed-b")

		st := w.stepper(managerClient)
		for pass := 0; !succeeded(w.remediation(keyA)) || !succeeded(w.remediation(keyB)); pass++ {
			Expect(pass).To(BeNumerically("<", 20))
			Expect(st.pass(keyA)).To(Succeed())
			Expect(st.pass(keyB)).To(Succeed())
		}
		remA, remB := w.remediation(keyA), w.remediation(keyB)
		Expect(remA.Status.NodeName).To(Equal(w.nodeName("failed-a")))
		Expect(remA.Status.Targets).To(ConsistOf(HaveField("UID", a.pod.UID)))
		Expect(remB.Status.Targets).To(ConsistOf(HaveField("UID", b.pod.UID)))
	})

	It("leaves every other pod on the node alone", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		g := w.addGateway("s3gw", "failed", "healthy")
		ui := w.addGateway("s3gw-ui", "failed", "healthy", withLabels(map[string]string{
			"app.kubernetes.io/name": "s3gw", "app.kubernetes.io/component": "ui"}))
		manager := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "longhorn-manager-x", Namespace: w.ns,
			Labels: map[string]string{"app": "longhorn-manager"}},
			Spec: corev1.PodSpec{NodeName: w.nodeName("failed"), Containers: []corev1.Container{{Name: "m", Image: "longhorn"}}}}
		Expect(w.c.Create(w.ctx, manager)).To(Succeed())
		w.setReady("failed", false)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
		key := w.remediate(e, "failed")

		recorder := newWriteRecorder()
		w.stepper(recorder).until(key, 20, succeeded)
		Expect(w.podExists(g.pod)).To(BeFalse())
		Expect(w.podExists(ui.pod)).To(BeTrue(), "the s3gw UI is not a gateway")
		Expect(w.podExists(manager)).To(BeTrue())
		Expect(w.attachments(ui, w.nodeName("failed"))).To(HaveLen(1))
		Expect(recorder.Writes("Pod")).To(ConsistOf(HaveField("Name", g.pod.Name)))
		Expect(recorder.Writes("VolumeAttachment")).To(BeEmpty(), "ControllerDetach leaves attachments to kube-controller-manager")
		Expect(recorder.Writes("VolumeAttachment.longhorn.io")).To(ConsistOf(write{Verb: "patch", Kind: "VolumeAttachment.longhorn.io",
			Name: g.pv}), "the one Longhorn write removes the failed node's ticket of the gateway's volume")
		Expect(w.node("failed").Status.VolumesInUse).To(ConsistOf(longhorn.UniqueVolumeName(ui.pv)))
	})

	It("works on a CR with a generated name, reading the node from the annotation", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		g := w.addGateway("s3gw", "failed", "healthy")
		w.setReady("failed", false)
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, true))
		key := w.remediate(e, "failed")
		Expect(key.Name).To(HavePrefix(w.nodeName("failed") + "-"))
		Expect(key.Name).NotTo(Equal(w.nodeName("failed")))

		w.stepper(managerClient).until(key, 20, succeeded)
		Expect(w.podExists(g.pod)).To(BeFalse())
		Expect(w.remediation(key).Status.NodeName).To(Equal(w.nodeName("failed")))
	})

	It("reports Longhorn missing without crashing or deleting anything", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
			Mode: s3gwv1alpha1.FencingModeDisabled}})
		base, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		noLonghorn := func(obj runtime.Object) error {
			gvk, err := apiutil.GVKForObject(obj, env.Scheme)
			Expect(err).NotTo(HaveOccurred())
			if gvk.Group == longhorn.GroupVersion.Group {
				return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{"v1beta2"}}
			}
			return nil
		}
		c := interceptor.NewClient(base, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := noLonghorn(obj); err != nil {
					return err
				}
				return c.Get(ctx, key, obj, opts...)
			},
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if err := noLonghorn(list); err != nil {
					return err
				}
				return c.List(ctx, list, opts...)
			},
		})
		st := s.w.stepper(c)
		st.until(s.key, 5, isPhase(s3gwv1alpha1.PhaseWaitingForStorage))
		Expect(s.w.remediation(s.key).Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded,
			metav1.ConditionUnknown, s3gwv1alpha1.ReasonLonghornUnavailable), "Longhorn may come back")
		s.w.clock.Step(s3gwv1alpha1.DefaultReleaseTimeout + time.Second)
		st.until(s.key, 2, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
			return meta.IsStatusConditionFalse(rem.Status.Conditions, s3gwv1alpha1.ConditionSucceeded)
		})
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonLonghornUnavailable))
		Expect(s.w.podExists(s.g.pod)).To(BeTrue())
		Expect(st.eventsWithReason(remediation.EventLonghornMissing)).To(HaveLen(2))
	})

	It("never strips NHC's annotations, labels or owner reference", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
		before := s.w.asUnstructured(s.key)
		s.w.stepper(managerClient).until(s.key, 20, succeeded)
		after := s.w.asUnstructured(s.key)
		Expect(after.GetAnnotations()).To(Equal(before.GetAnnotations()))
		Expect(after.GetLabels()).To(Equal(before.GetLabels()))
		Expect(after.GetOwnerReferences()).To(Equal(before.GetOwnerReferences()))
		Expect(medik8s.NodeName(after)).To(Equal(s.w.nodeName("failed")))
	})
})

var _ = Describe("A volume whose pod was already deleted", func() {
	It("is still released, e.g. after a fencing remediator's ResourceDeletion", func() {
		s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
			Remediators: farEvidence()}}, noStorageIsolation)
		s.w.addFAR("failed", "FenceAgentActionSucceeded", metav1.ConditionTrue)
		// FAR's ResourceDeletion force-deleted every pod on the node; the
		// ReplicaSet's replacement now waits on Multi-Attach.
		Expect(s.w.c.Delete(s.w.ctx, s.g.pod, client.GracePeriodSeconds(0))).To(Succeed())
		s.w.simulate()
		Expect(s.w.attachments(s.g, s.w.nodeName("failed"))).To(HaveLen(1), "nothing released the volume")

		st := s.w.stepper(managerClient)
		st.until(s.key, 20, succeeded)
		rem := s.w.remediation(s.key)
		Expect(rem.Status.Targets).To(ConsistOf(And(
			HaveField("Name", BeEmpty()), HaveField("UID", BeEmpty()),
			HaveField("Owner", HaveValue(HaveField("Name", s.g.deployment.Name))),
			HaveField("Volumes", ConsistOf(HaveField("PersistentVolume", s.g.pv))),
			HaveField("State", s3gwv1alpha1.TargetReplaced))))
		Expect(s.w.attachments(s.g, s.w.nodeName("failed"))).To(BeEmpty())
		Expect(st.eventsWithReason(remediation.EventPodEvicted)).To(BeEmpty(), "there was no pod left to delete")
		Expect(st.eventsWithReason(remediation.EventVolumeUnmarked)).To(HaveLen(2))
	})

	It("is left alone when no s3gw pod uses its claim", func() {
		w := newWorld(suiteCtx)
		w.addNode("healthy", true)
		w.addNode("failed", true)
		other := w.addGateway("other", "failed", "healthy", withLabels(map[string]string{"app": "other"}))
		w.setReady("failed", false)
		Expect(w.c.Delete(w.ctx, other.pod, client.GracePeriodSeconds(0))).To(Succeed())
		w.simulate() // the other app's replacement is pending elsewhere
		e := w.nhc(w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{}, false))
		key := w.remediate(e, "failed")

		w.stepper(managerClient).until(key, 5, succeeded)
		Expect(w.remediation(key).Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionSucceeded,
			metav1.ConditionTrue, s3gwv1alpha1.ReasonNoWorkloadOnNode))
		Expect(w.attachments(other, w.nodeName("failed"))).To(HaveLen(1))
	})
})
