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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/protection"
	"github.com/s3gw-tech/s3gw-remediation/internal/eventrecorder"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// reportStory is one template's protection report, reconciled pass by pass
// by the manager's service account (so the generated RBAC is proven too).
type reportStory struct {
	w  *world
	st *stepper
	r  *ProtectionReconciler
	t  *s3gwv1alpha1.S3GWRemediationTemplate
}

// newReportStory has nodes a and b in w, and a template selecting w's
// pods; watched says whether a NodeHealthCheck references it.
func newReportStory(w *world, spec s3gwv1alpha1.S3GWRemediationSpec, watched bool) *reportStory {
	w.addNode("a", true)
	w.addNode("b", true)
	spec.Namespaces = []string{w.ns}
	s := &reportStory{w: w, st: w.stepper(managerClient)}
	s.r = &ProtectionReconciler{Client: managerClient, APIReader: managerClient, Recorder: s.st.recorder,
		Clock: w.clock, Metrics: s.st.r.Metrics, WorkloadCache: DefaultWorkloadCache()}
	s.t = w.template("s3gw", spec, true)
	if watched {
		w.nhc(s.t)
	}
	return s
}

// report runs one pass and returns the template's status.
func (s *reportStory) report() s3gwv1alpha1.S3GWRemediationTemplateStatus {
	_, err := s.r.Reconcile(s.w.ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s.t)})
	Expect(err).NotTo(HaveOccurred())
	s.st.drainEvents()
	Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.t), s.t)).To(Succeed())
	return s.t.Status
}

// pod returns the report of the only pod.
func (s *reportStory) pod() s3gwv1alpha1.PodProtection {
	status := s.report()
	Expect(status.Pods).To(HaveLen(1))
	return status.Pods[0]
}

func (s *reportStory) podLabels(g *gateway, reason string) map[string]string {
	return map[string]string{"template_namespace": s.t.Namespace, "template": s.t.Name,
		"namespace": g.ns, "pod": g.pod.Name, "node": g.pod.Spec.NodeName, "reason": reason}
}

func (s *reportStory) protectedGauge(g *gateway, reason string) float64 {
	return s.st.metric("s3gw_remediation_pod_protected", s.podLabels(g, reason))
}

// expectUnprotected checks a pod's report, the Protected condition and
// the gauge for a reason.
func (s *reportStory) expectUnprotected(g *gateway, reason string, message ...string) s3gwv1alpha1.PodProtection {
	p := s.pod()
	Expect(p.Protected).To(BeFalse(), "%+v", p)
	Expect(p.Reason).To(Equal(reason), "%+v", p)
	for _, m := range message {
		Expect(p.Message).To(ContainSubstring(m))
	}
	Expect(p.ExpectedRTO).To(BeNil())
	Expect(s.t.Status.Protection).To(Equal("0/1"))
	Expect(s.t.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProtected, metav1.ConditionFalse, s3gwv1alpha1.ReasonPodsUnprotected))
	Expect(s.protectedGauge(g, reason)).To(BeZero())
	Expect(s.st.eventsWithReason(protection.EventPodUnprotected)).NotTo(BeEmpty())
	return p
}

// defaultRTO is the budget with Kubernetes' grace period, the emulated
// NodeHealthCheck's default 300 s and ControllerDetach's measured release.
const defaultRTO = 50*time.Second + 300*time.Second + 5300*time.Millisecond

var _ = Describe("The protection report", func() {
	It("reports a pod whose replicas are all elsewhere as protected by storage isolation, with the expected RTO", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, true)
		g := s.w.addGateway("gw", "a", "b")

		p := s.pod()
		Expect(p.Protected).To(BeTrue(), "%+v", p)
		Expect(p.Reason).To(Equal(s3gwv1alpha1.ReasonPodProtected))
		Expect(p.Node).To(Equal(s.w.nodeName("a")))
		Expect(p.Evidence).To(ConsistOf("StorageIsolation"))
		Expect(p.NodeHealthChecks).To(ConsistOf("nhc-" + s.w.id + "-s3gw"))
		Expect(p.ExpectedRTO).To(Equal(&metav1.Duration{Duration: defaultRTO}))
		Expect(p.Volumes).To(Equal([]s3gwv1alpha1.VolumePlacement{{ClaimName: g.claim, LonghornVolume: g.pv,
			Replicas: []string{g.pv + "-r-0@" + s.w.nodeName("b")}, HealthyReplicasElsewhere: 1}}))

		status := s.t.Status
		Expect(status.Protection).To(Equal("1/1"))
		Expect(status.ExpectedRTO).To(Equal(&metav1.Duration{Duration: defaultRTO}))
		Expect(status.NodeHealthChecks).To(ConsistOf("nhc-" + s.w.id + "-s3gw"))
		Expect(status.ObservedGeneration).To(Equal(s.t.Generation))
		Expect(status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProtected, metav1.ConditionTrue, s3gwv1alpha1.ReasonAllPodsProtected))
		Expect(s.protectedGauge(g, s3gwv1alpha1.ReasonPodProtected)).To(Equal(1.0))
		Expect(s.st.metric("s3gw_remediation_pod_expected_rto_seconds", s.podLabels(g, s3gwv1alpha1.ReasonPodProtected))).
			To(Equal(defaultRTO.Seconds()))
		Expect(s.st.events).To(BeEmpty(), "a pod protected from the start is no news")

		By("Writing nothing when nothing changed")
		version := s.t.ResourceVersion
		s.report()
		Expect(s.t.ResourceVersion).To(Equal(version))
	})

	It("reports again, without an error or a second warning, when the template changed since it was read", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, true)
		g := s.w.addGateway("gw", "a", "b")
		addReplica(s.w, g, 1, "a")
		// The template controller annotates the template between the
		// report's read and its status write, as at every install.
		annotated := false
		asManager := rest.CopyConfig(cfg)
		asManager.Impersonate = rest.ImpersonationConfig{UserName: testenv.ManagerUser}
		base, err := client.NewWithWatch(asManager, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		s.r.Client = interceptor.NewClient(base, interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
				opts ...client.SubResourcePatchOption) error {
				if !annotated {
					annotated = true
					t := &s3gwv1alpha1.S3GWRemediationTemplate{}
					Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), t)).To(Succeed())
					t.Annotations = map[string]string{"example.com/touched": "true"}
					Expect(k8sClient.Update(ctx, t)).To(Succeed())
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			}})

		res, err := s.r.Reconcile(s.w.ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s.t)})
		Expect(err).NotTo(HaveOccurred(), "a template changed meanwhile is no error")
		Expect(res.RequeueAfter).To(BeNumerically(">", 0), "it reports again at once")
		s.st.drainEvents()
		Expect(s.st.events).To(BeEmpty(), "nothing is announced before the report is written")

		s.expectUnprotected(g, s3gwv1alpha1.ReasonNoFencingEvidence)
		Expect(s.st.eventsWithReason(protection.EventPodUnprotected)).To(HaveLen(1))
	})

	It("warns when a replica lands on the s3gw node, names it, and tells when the pod is protected again", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, true)
		g := s.w.addGateway("gw", "a", "b")
		Expect(s.pod().Protected).To(BeTrue())

		By("Longhorn rebuilding a replica on the s3gw node")
		addReplica(s.w, g, 1, "a")
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNoFencingEvidence,
			"replica "+g.pv+"-r-1 of "+g.pv+" is on the node", "soft anti-affinity")
		Expect(s.st.eventsWithReason(protection.EventPodUnprotected)).To(HaveLen(1))
		Expect(s.st.eventsWithReason(protection.EventPodUnprotected)[0]).To(ContainSubstring(g.pv + "-r-1"))
		Expect(s.protectedGauge(g, s3gwv1alpha1.ReasonPodProtected)).To(BeZero(), "the protected series is gone")

		By("Reporting again without a change: no second warning")
		s.report()
		Expect(s.st.eventsWithReason(protection.EventPodUnprotected)).To(HaveLen(1))

		By("Longhorn moving the replica off the node again")
		removeReplica(s.w, g, 1)
		Expect(s.pod().Protected).To(BeTrue())
		Expect(s.st.eventsWithReason(protection.EventPodProtected)).To(HaveLen(1))
		Expect(s.protectedGauge(g, s3gwv1alpha1.ReasonPodProtected)).To(Equal(1.0))
	})

	It("reads a change that comes within the report interval when the interval ends, and only then reports it", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, true)
		s.r.ReportInterval = 5 * time.Second
		g := s.w.addGateway("gw", "a", "b")
		Expect(s.pod().Protected).To(BeTrue(), "the first report is written at once")
		version := s.t.ResourceVersion

		By("Longhorn rebuilding a replica on the s3gw node a second later")
		s.w.clock.Step(time.Second)
		addReplica(s.w, g, 1, "a")
		res, err := s.r.Reconcile(s.w.ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s.t)})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(4*time.Second), "it comes back when the interval ends")
		s.st.drainEvents()
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(s.t), s.t)).To(Succeed())
		Expect(s.t.ResourceVersion).To(Equal(version), "the status is not written within the interval")
		Expect(s.st.eventsWithReason(protection.EventPodUnprotected)).To(BeEmpty(), "nothing is announced before it is written")
		Expect(s.protectedGauge(g, s3gwv1alpha1.ReasonPodProtected)).To(Equal(1.0), "nor is it in the metrics: the pass waits for the interval's end")

		By("The interval over")
		s.w.clock.Step(4 * time.Second)
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNoFencingEvidence, "replica "+g.pv+"-r-1 of "+g.pv+" is on the node")
		Expect(s.st.eventsWithReason(protection.EventPodUnprotected)).To(HaveLen(1))
	})

	It("counts a usable fencing delegate, and not a delegate whose template is missing", func() {
		w := newWorld(suiteCtx)
		s := newReportStory(w, w.delegateSpec(true), true) // the delegate is the only evidence source
		g := s.w.addGateway("gw", "a", "b")

		p := s.pod()
		Expect(p.Protected).To(BeTrue(), "%+v", p)
		Expect(p.Evidence).To(ConsistOf("delegate FenceAgentsRemediation/" + s.w.nodeName("a")))

		By("Deleting the FenceAgentsRemediationTemplate")
		far := farTemplate(s.w)
		Expect(s.w.c.Delete(s.w.ctx, far)).To(Succeed())
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNoFencingEvidence, "delegate: template FenceAgentsRemediationTemplate "+w.fencerNamespace()+"/far not found")
		Expect(s.t.Status.Pods[0].Evidence).To(BeEmpty())
	})

	It("counts a listed remediator whose kind is served, and not one that is not installed", func() {
		spec := s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
			StorageIsolation: ptr.To(false), Remediators: farEvidence()}}
		s := newReportStory(newWorld(suiteCtx), spec, true)
		g := s.w.addGateway("gw", "a", "b")
		p := s.pod()
		Expect(p.Protected).To(BeTrue(), "%+v", p)
		Expect(p.Evidence).To(ConsistOf("FenceAgentsRemediation/" + s.w.nodeName("a")))

		s.t.Spec.Template.Spec.Fencing.Remediators = []s3gwv1alpha1.RemediatorEvidence{{APIVersion: "self-node-remediation.medik8s.io/v1alpha1",
			Kind: "SelfNodeRemediation"}}
		Expect(s.w.c.Update(s.w.ctx, s.t)).To(Succeed())
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNoFencingEvidence, "SelfNodeRemediation: SelfNodeRemediation is not installed")
		Expect(s.t.Status.ObservedGeneration).To(Equal(s.t.Generation))
	})

	It("never counts the out-of-service taint: only an admin adds it, by hand", func() {
		spec := s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false)}}
		s := newReportStory(newWorld(suiteCtx), spec, true)
		g := s.w.addGateway("gw", "a", "b")
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNoFencingEvidence, "an out-of-service taint counts only when an admin adds it by hand")
	})

	It("reports a fenced pod without a healthy replica elsewhere as NoHealthyReplica", func() {
		w := newWorld(suiteCtx)
		s := newReportStory(w, w.delegateSpec(true), true)
		g := s.w.addGateway("gw", "a", "b", withReplicasOn("a"))
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNoHealthyReplica, "No healthy replica on another node for "+g.pv, "numberOfReplicas")
		Expect(s.t.Status.Pods[0].Volumes[0].HealthyReplicasElsewhere).To(BeZero())
	})

	It("warns, on a protected pod, that Longhorn's auto-salvage is on, without changing its verdict or its expected RTO", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, true)
		g := s.w.addGateway("gw", "a", "b")
		Expect(s.pod().Message).NotTo(ContainSubstring("auto-salvage"), "no Setting to read: nothing to warn of")

		By("Longhorn's auto-salvage Setting at its default, true")
		setting := setAutoSalvage(s.w, "true")
		p := s.pod()
		Expect(p.Protected).To(BeTrue(), "%+v", p)
		Expect(p.Reason).To(Equal(s3gwv1alpha1.ReasonPodProtected))
		Expect(p.ExpectedRTO).To(Equal(&metav1.Duration{Duration: defaultRTO}))
		Expect(p.Message).To(And(ContainSubstring("Warning: Longhorn's auto-salvage is on (setting auto-salvage in "+longhornNS+")"),
			ContainSubstring("Set it to false"), ContainSubstring(`docs/safety.md, "7. Residual risks"`)))
		Expect(s.t.Status.Protection).To(Equal("1/1"))
		Expect(s.t.Status.ExpectedRTO).To(Equal(&metav1.Duration{Duration: defaultRTO}))
		Expect(s.t.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProtected, metav1.ConditionTrue, s3gwv1alpha1.ReasonAllPodsProtected))
		Expect(onlyCondition(s.t.Status.Conditions).Message).To(ContainSubstring("warning: Longhorn's auto-salvage is on"))
		Expect(s.protectedGauge(g, s3gwv1alpha1.ReasonPodProtected)).To(Equal(1.0))
		Expect(s.st.metric("s3gw_remediation_pod_expected_rto_seconds", s.podLabels(g, s3gwv1alpha1.ReasonPodProtected))).
			To(Equal(defaultRTO.Seconds()))
		Expect(s.st.events).To(BeEmpty(), "the pod is still protected: no news")

		By("Turning auto-salvage off")
		setting.Value = "false"
		Expect(k8sClient.Update(s.w.ctx, setting)).To(Succeed())
		p = s.pod()
		Expect(p.Protected).To(BeTrue())
		Expect(p.Message).NotTo(ContainSubstring("auto-salvage"))
		Expect(onlyCondition(s.t.Status.Conditions).Message).NotTo(ContainSubstring("auto-salvage"))

		By("The manager's cache reading that one Setting with the manager's role, which reads no other")
		asManager := rest.CopyConfig(cfg)
		asManager.Impersonate = rest.ImpersonationConfig{UserName: testenv.ManagerUser}
		options := CacheOptions(DefaultWorkloadCache())
		options.Scheme = env.Scheme
		managerCache, err := cache.New(asManager, options)
		Expect(err).NotTo(HaveOccurred())
		// A cache that may not list waits for ever; the deadline makes that a failure.
		ctx, stop := context.WithTimeout(s.w.ctx, time.Minute)
		defer stop()
		go func() { _ = managerCache.Start(ctx) }()
		Expect(managerCache.WaitForCacheSync(ctx)).To(BeTrue())
		read := &longhorn.Setting{}
		Expect(managerCache.Get(ctx, client.ObjectKeyFromObject(setting), read)).To(Succeed())
		Expect(read.Value).To(Equal("false"))
		Expect(apierrors.IsForbidden(managerClient.List(s.w.ctx, &longhorn.SettingList{}))).To(BeTrue())
	})

	It("does not warn, nor fail, when Longhorn's Setting kind is not served", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, true)
		s.w.addGateway("gw", "a", "b")
		setAutoSalvage(s.w, "true")
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme, Mapper: hidingMapper{RESTMapper: managerClient.RESTMapper(),
			kinds: []schema.GroupKind{{Group: longhorn.GroupVersion.Group, Kind: "Setting"}}}})
		Expect(err).NotTo(HaveOccurred())
		s.r.Client, s.r.APIReader = c, c
		p := s.pod()
		Expect(p.Protected).To(BeTrue(), "%+v", p)
		Expect(p.Message).NotTo(ContainSubstring("auto-salvage"))
	})

	It("reports a volume whose revision counter is disabled as RevisionCounterDisabled, with the StorageClass that fixes it", func() {
		w := newWorld(suiteCtx)
		s := newReportStory(w, w.delegateSpec(true), true)
		g := s.w.addGateway("gw", "a", "b", revisionCounterDisabled)
		s.expectUnprotected(g, s3gwv1alpha1.ReasonRevisionCounterDisabled, g.pv+" has the revision counter disabled",
			`disableRevisionCounter: "false"`, "release.acceptStaleReadsWithoutRevisionCounter: true")
	})

	It("reports an RWX volume as NotLonghornRWO", func() {
		w := newWorld(suiteCtx)
		s := newReportStory(w, w.delegateSpec(true), true)
		g := s.w.addGateway("gw", "a", "b", withAccessMode(corev1.ReadWriteMany))
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNotLonghornRWO, "volume "+g.claim+" of "+g.ns+"/"+g.pod.Name+" is not ReadWriteOnce")
	})

	It("reports a volume Longhorn does not know in release.longhornNamespace as LonghornUnavailable", func() {
		w := newWorld(suiteCtx)
		spec := w.delegateSpec(true)
		spec.Release.LonghornNamespace = "longhorn-elsewhere"
		s := newReportStory(w, spec, true)
		g := s.w.addGateway("gw", "a", "b")
		s.expectUnprotected(g, s3gwv1alpha1.ReasonLonghornUnavailable, "not found in longhorn-elsewhere")
	})

	It("reports the OutOfServiceTaint release on storage isolation alone as NeedsProofOfShutdown", func() {
		spec := s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}}
		s := newReportStory(newWorld(suiteCtx), spec, true)
		g := s.w.addGateway("gw", "a", "b")
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNeedsProofOfShutdown, "needs proof the node is shut down")
	})

	It("reports a pod with finalizers on storage isolation alone as PodFinalizers", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, true)
		g := s.w.addGateway("gw", "a", "b")
		pod := &corev1.Pod{}
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(g.pod), pod)).To(Succeed())
		pod.Finalizers = []string{"example.com/hold"}
		Expect(s.w.c.Update(s.w.ctx, pod)).To(Succeed())
		s.expectUnprotected(g, s3gwv1alpha1.ReasonPodFinalizers, "example.com/hold")

		// Cleared, so the world can delete it.
		Expect(s.w.c.Get(s.w.ctx, client.ObjectKeyFromObject(g.pod), pod)).To(Succeed())
		pod.Finalizers = nil
		Expect(s.w.c.Update(s.w.ctx, pod)).To(Succeed())
		Expect(s.pod().Protected).To(BeTrue())
	})

	It("warns when no NodeHealthCheck references the template, and follows one that selects the node", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, false)
		g := s.w.addGateway("gw", "a", "b")
		p := s.expectUnprotected(g, s3gwv1alpha1.ReasonNoNodeHealthCheck, "no NodeHealthCheck references this template")
		Expect(p.Evidence).To(ConsistOf("StorageIsolation"), "the evidence would hold; nothing would start the remediation")
		Expect(s.t.Status.NodeHealthChecks).To(BeEmpty())
		Expect(onlyCondition(s.t.Status.Conditions).Message).To(ContainSubstring("no NodeHealthCheck references this template"))

		By("A NodeHealthCheck that references the template but selects other nodes")
		s.w.nodeHealthCheck("elsewhere", func(e *nhc.Emulator) {
			e.Template = templateRef(s.t)
			e.Selector = metav1.LabelSelector{MatchLabels: map[string]string{worldLabel: "nowhere"}}
		})
		s.expectUnprotected(g, s3gwv1alpha1.ReasonNoNodeHealthCheck, "nhc-"+s.w.id+"-elsewhere does not select node "+s.w.nodeName("a"))

		By("A NodeHealthCheck escalating to the template after a FAR step of 2 minutes")
		far := s.w.delegateSpec(true).Fencing.Delegate
		s.w.nodeHealthCheck("escalating", func(e *nhc.Emulator) {
			e.UnhealthyDuration = time.Minute
			e.Escalation = []nhc.Step{
				{Template: nhc.TemplateRef{APIVersion: far.APIVersion, Kind: far.Kind, Namespace: far.Namespace, Name: far.Name}, Order: 0, Timeout: 2 * time.Minute},
				{Template: templateRef(s.t), Order: 1, Timeout: 5 * time.Minute},
			}
		})
		p = s.pod()
		Expect(p.Protected).To(BeTrue(), "%+v", p)
		Expect(p.NodeHealthChecks).To(ConsistOf("nhc-" + s.w.id + "-escalating"))
		Expect(p.ExpectedRTO.Duration).To(Equal(50*time.Second + time.Minute + 2*time.Minute + 5300*time.Millisecond))
		Expect(s.st.eventsWithReason(protection.EventPodProtected)).To(HaveLen(1))
	})

	It("says so, and does not fail, when NodeHealthCheck and the delegate's kind are not installed", func() {
		w := newWorld(suiteCtx)
		s := newReportStory(w, w.delegateSpec(true), true)
		g := s.w.addGateway("gw", "a", "b")
		// A cluster without medik8s' CRDs: the client's RESTMapper knows neither group.
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme, Mapper: hidingMapper{RESTMapper: managerClient.RESTMapper(),
			groups: []string{"remediation.medik8s.io", "fence-agents-remediation.medik8s.io"}}})
		Expect(err).NotTo(HaveOccurred())
		s.r.Client, s.r.APIReader = c, c
		p := s.expectUnprotected(g, s3gwv1alpha1.ReasonNoFencingEvidence, "delegate: FenceAgentsRemediation is not installed",
			"Also: NodeHealthCheck is not installed")
		Expect(p.NodeHealthChecks).To(BeEmpty())
		Expect(s.t.Status.NodeHealthChecks).To(BeEmpty())
	})

	It("reports no pods when the selector matches none", func() {
		s := newReportStory(newWorld(suiteCtx), s3gwv1alpha1.S3GWRemediationSpec{}, true)
		status := s.report()
		Expect(status.Protection).To(Equal("0/0"))
		Expect(status.Pods).To(BeEmpty())
		Expect(status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProtected, metav1.ConditionFalse, s3gwv1alpha1.ReasonNoPodsSelected))
		// No per-pod series: only the template's count shows it protects nothing.
		Expect(s.st.metric("s3gw_remediation_template_selected_pods",
			map[string]string{"template_namespace": s.t.Namespace, "template": s.t.Name})).To(BeZero())

		g := s.w.addGateway("gw", "a", "b")
		Expect(s.report().Protection).To(Equal("1/1"))
		Expect(s.st.metric("s3gw_remediation_template_selected_pods",
			map[string]string{"template_namespace": s.t.Namespace, "template": s.t.Name})).To(Equal(1.0))
		Expect(s.protectedGauge(g, s3gwv1alpha1.ReasonPodProtected)).To(Equal(1.0))
	})
})

// addReplica creates a healthy Longhorn replica of the gateway's volume on
// a node, as Longhorn does when it rebuilds one.
func addReplica(w *world, g *gateway, index int, short string) {
	Expect(w.c.Create(w.ctx, &longhorn.Replica{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-r-%d", g.pv, index), Namespace: longhornNS,
			Labels: map[string]string{longhorn.VolumeLabel: g.pv}},
		Spec: longhorn.ReplicaSpec{NodeID: w.nodeName(short), VolumeName: g.pv, HealthyAt: "2026-11-30T00:00:00Z"},
	})).To(Succeed())
}

// removeReplica deletes the replica addReplica created, as Longhorn does
// once it rebuilt it elsewhere.
func removeReplica(w *world, g *gateway, index int) {
	Expect(w.c.Delete(w.ctx, &longhorn.Replica{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-r-%d", g.pv, index), Namespace: longhornNS}})).To(Succeed())
}

// setAutoSalvage creates Longhorn's auto-salvage Setting with a value, as
// longhorn-manager does when it starts, and deletes it when the story ends.
func setAutoSalvage(w *world, value string) *longhorn.Setting {
	setting := &longhorn.Setting{ObjectMeta: metav1.ObjectMeta{Namespace: longhornNS, Name: longhorn.SettingAutoSalvage}, Value: value}
	Expect(k8sClient.Create(w.ctx, setting)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, setting))).To(Succeed())
	})
	return setting
}

// farTemplate is the FenceAgentsRemediationTemplate delegateSpec created.
func farTemplate(w *world) client.Object {
	far := &unstructured.Unstructured{}
	far.SetAPIVersion("fence-agents-remediation.medik8s.io/v1alpha1")
	far.SetKind("FenceAgentsRemediationTemplate")
	far.SetNamespace(w.fencerNamespace())
	far.SetName("far")
	return far
}

func onlyCondition(conds []metav1.Condition) metav1.Condition {
	Expect(conds).To(HaveLen(1))
	return conds[0]
}

// The report in the real manager: cache, watches and workqueue, and no
// polling, so each change below reaches the status through an event.
var _ = Describe("The protection report in the manager", Ordered, func() {
	var stop context.CancelFunc
	stopped := make(chan struct{})
	AfterAll(func() {
		stop()
		Eventually(stopped).WithTimeout(30 * time.Second).Should(BeClosed())
	})
	BeforeAll(func() {
		// Earlier stories leave their templates behind, each reporting on
		// every pod; the manager would wake them all on each event of this
		// story, and its one worker fall behind the story's deadlines.
		leftovers := &s3gwv1alpha1.S3GWRemediationTemplateList{}
		Expect(k8sClient.List(suiteCtx, leftovers)).To(Succeed())
		for i := range leftovers.Items {
			Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, &leftovers.Items[i]))).To(Succeed())
		}
		var mgrCtx context.Context
		mgrCtx, stop = context.WithCancel(suiteCtx)
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{
			Scheme:     env.Scheme,
			Metrics:    metricsserver.Options{BindAddress: "0"},
			Controller: config.Controller{SkipNameValidation: ptr.To(true)},
			Cache:      CacheOptions(DefaultWorkloadCache()),
			Client:     ClientOptions(),
		})
		Expect(err).NotTo(HaveOccurred())
		Expect((&ProtectionReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder: eventrecorder.Legacy{Recorder: mgr.GetEventRecorder("s3gw-remediation")},
			Clock:    clock.RealClock{}, Metrics: metrics.New(prometheus.NewRegistry()),
			WorkloadCache:    DefaultWorkloadCache(),
			InstanceManagers: storage.NewInstanceManagerIndex(mgr.GetCache())}).SetupWithManager(mgr)).To(Succeed())
		go func() {
			defer GinkgoRecover()
			defer close(stopped)
			Expect(mgr.Start(mgrCtx)).To(Succeed())
		}()
	})

	// The manager starts its informers first, on a loaded machine.
	eventually := func(actual any) AsyncAssertion { return Eventually(actual).WithTimeout(15 * time.Second) }
	status := func(w *world, t *s3gwv1alpha1.S3GWRemediationTemplate) func(Gomega) s3gwv1alpha1.S3GWRemediationTemplateStatus {
		return func(g Gomega) s3gwv1alpha1.S3GWRemediationTemplateStatus {
			g.Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			return t.Status
		}
	}

	It("follows replicas, NodeHealthChecks, nodes and pods through watch events", func() {
		w := newWorld(suiteCtx)
		w.addNode("a", true)
		w.addNode("b", true)
		t := w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{Namespaces: []string{w.ns}}, true)
		g := w.addGateway("gw", "a", "b")
		eventually(status(w, t)).Should(HaveField("Pods", ConsistOf(HaveField("Reason", s3gwv1alpha1.ReasonNoNodeHealthCheck))))

		By("Creating a NodeHealthCheck that references the template")
		check := w.nhc(t)
		eventually(status(w, t)).Should(HaveField("Protection", "1/1"))

		By("NHC disabling the NodeHealthCheck (a status write, no new generation), then enabling it again")
		setPhase := func(phase, reason string) {
			obj := nhc.NodeHealthCheckObject()
			Expect(k8sClient.Get(w.ctx, client.ObjectKey{Name: check.Name}, obj)).To(Succeed())
			Expect(unstructured.SetNestedField(obj.Object, phase, "status", "phase")).To(Succeed())
			Expect(unstructured.SetNestedField(obj.Object, reason, "status", "reason")).To(Succeed())
			Expect(k8sClient.Status().Update(w.ctx, obj)).To(Succeed())
		}
		setPhase("Disabled", "NHC is disabled: RemediationTemplateNotFound: Remediation template not found")
		eventually(status(w, t)).Should(HaveField("Pods", ConsistOf(And(
			HaveField("Reason", s3gwv1alpha1.ReasonNoNodeHealthCheck),
			HaveField("Message", ContainSubstring(check.Name+" is disabled (status.phase Disabled: NHC is disabled: RemediationTemplateNotFound"))))))
		setPhase("Enabled", "NHC is enabled, no ongoing remediation")
		eventually(status(w, t)).Should(HaveField("Protection", "1/1"))

		By("Longhorn rebuilding a replica on the s3gw node")
		addReplica(w, g, 1, "a")
		eventually(status(w, t)).Should(And(HaveField("Protection", "0/1"),
			HaveField("Pods", ConsistOf(HaveField("Message", ContainSubstring(g.pv+"-r-1 of "+g.pv+" is on the node"))))))
		eventually(func(gm Gomega) []string {
			list := &eventsv1.EventList{}
			gm.Expect(w.c.List(w.ctx, list, client.InNamespace(w.ns))).To(Succeed())
			var reasons []string
			for _, e := range list.Items {
				if e.Regarding.Name == t.Name {
					reasons = append(reasons, e.Reason)
				}
			}
			return reasons
		}).Should(ContainElement(protection.EventPodUnprotected))

		By("Longhorn dropping it again")
		removeReplica(w, g, 1)
		eventually(status(w, t)).Should(HaveField("Protection", "1/1"))

		By("The replica node's instance manager restarting: nobody could confirm its replica's stop")
		w.setInstanceManagerState("b", "starting") // v1beta2 InstanceManagerStateStarting
		eventually(status(w, t)).Should(HaveField("Pods", ConsistOf(And(
			HaveField("Reason", s3gwv1alpha1.ReasonReplicaStopUnconfirmed),
			HaveField("Message", ContainSubstring("no running instance manager on "+w.nodeName("b")))))))
		w.setInstanceManagerState("b", longhorn.InstanceManagerRunning)
		eventually(status(w, t)).Should(HaveField("Protection", "1/1"))

		By("The replica node going NotReady: Longhorn cannot stop its replica")
		w.setReady("b", false)
		eventually(status(w, t)).Should(HaveField("Pods", ConsistOf(And(
			HaveField("Reason", s3gwv1alpha1.ReasonNoFencingEvidence),
			HaveField("Message", ContainSubstring("which longhorn-manager cannot reach"))))))
		w.clock.SetTime(time.Now()) // the kubelet renews its Lease now
		w.setReady("b", true)
		eventually(status(w, t)).Should(HaveField("Protection", "1/1"))

		By("The gateway's pod going away")
		Expect(w.c.Delete(w.ctx, g.pod, client.GracePeriodSeconds(0))).To(Succeed())
		eventually(status(w, t)).Should(And(HaveField("Protection", "0/0"), HaveField("Pods", BeEmpty())))
	})

	It("warns of Longhorn's auto-salvage once its Setting turns it on, and no more once it is off", func() {
		w := newWorld(suiteCtx)
		w.addNode("a", true)
		w.addNode("b", true)
		t := w.template("s3gw", s3gwv1alpha1.S3GWRemediationSpec{Namespaces: []string{w.ns}}, true)
		w.nhc(t)
		w.addGateway("gw", "a", "b")
		eventually(status(w, t)).Should(And(HaveField("Protection", "1/1"),
			HaveField("Pods", ConsistOf(HaveField("Message", Not(ContainSubstring("auto-salvage")))))))

		By("Longhorn creating its auto-salvage Setting, on")
		setting := setAutoSalvage(w, "true")
		eventually(status(w, t)).Should(And(HaveField("Protection", "1/1"),
			HaveField("Pods", ConsistOf(HaveField("Message", ContainSubstring("Longhorn's auto-salvage is on"))))))

		By("Turning it off")
		setting.Value = "false"
		Expect(k8sClient.Update(w.ctx, setting)).To(Succeed())
		eventually(status(w, t)).Should(And(HaveField("Protection", "1/1"),
			HaveField("Pods", ConsistOf(HaveField("Message", Not(ContainSubstring("auto-salvage")))))))
	})
})

// hidingMapper is a RESTMapper of a cluster where the groups and kinds are
// not served.
type hidingMapper struct {
	meta.RESTMapper
	groups []string
	kinds  []schema.GroupKind
}

func (m hidingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if slices.Contains(m.groups, gk.Group) || slices.Contains(m.kinds, gk) {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return m.RESTMapper.RESTMapping(gk, versions...)
}
