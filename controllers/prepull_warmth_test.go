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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/prepull"
	"github.com/s3gw-tech/s3gw-remediation/controllers/protection"
	"github.com/s3gw-tech/s3gw-remediation/internal/eventrecorder"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	internalprepull "github.com/s3gw-tech/s3gw-remediation/internal/prepull"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// runPrePullPod plays the DaemonSet controller and the kubelet for one
// node: the DaemonSet's pod there, in the state set gives it.
func runPrePullPod(w *world, ds *appsv1.DaemonSet, short string, set func(*corev1.Pod)) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: ds.Name + "-" + short,
		Labels: ds.Spec.Template.Labels, Annotations: ds.Spec.Template.Annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}},
		Spec: ds.Spec.Template.Spec}
	pod.Spec.NodeName = w.nodeName(short)
	if err := w.c.Create(w.ctx, pod); err != nil {
		Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	}
	set(pod)
	Expect(w.c.Status().Update(w.ctx, pod)).To(Succeed())
}

func prePullRunning(p *corev1.Pod) {
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	p.Status.InitContainerStatuses, p.Status.ContainerStatuses = nil, []corev1.ContainerStatus{{Name: "idle", Ready: true,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
}

func prePullBackingOff(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "pull-0", Image: "quay.io/s3gw/s3gw",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: `Back-off pulling image "quay.io/s3gw/s3gw": unauthorized: access denied`}}}}
}

// The pre-pull reconciler and the protection report in the real manager,
// sharing the pre-pull cache as cmd/manager wires them: each change below
// reaches the DaemonSet and the report through watch events alone.
var _ = Describe("Warm replacement in the manager", Ordered, func() {
	var stop context.CancelFunc
	stopped := make(chan struct{})
	registry := prometheus.NewRegistry()
	AfterAll(func() {
		stop()
		Eventually(stopped).WithTimeout(30 * time.Second).Should(BeClosed())
	})
	BeforeAll(func() {
		// Earlier stories leave templates behind, each reporting on every
		// event of this story.
		leftovers := &s3gwv1alpha1.S3GWRemediationTemplateList{}
		Expect(k8sClient.List(suiteCtx, leftovers)).To(Succeed())
		for i := range leftovers.Items {
			Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, &leftovers.Items[i]))).To(Succeed())
		}
		var mgrCtx context.Context
		mgrCtx, stop = context.WithCancel(suiteCtx)
		asManager := rest.CopyConfig(cfg)
		asManager.Impersonate = rest.ImpersonationConfig{UserName: testenv.ManagerUser}
		mgr, err := ctrl.NewManager(asManager, ctrl.Options{
			Scheme:     env.Scheme,
			Metrics:    metricsserver.Options{BindAddress: "0"},
			Controller: config.Controller{SkipNameValidation: ptr.To(true)},
			Cache:      CacheOptions(DefaultWorkloadCache()),
			Client:     ClientOptions(),
		})
		Expect(err).NotTo(HaveOccurred())
		recorder := eventrecorder.Legacy{Recorder: mgr.GetEventRecorder("s3gw-remediation")}
		prePull, err := prepull.NewCache(mgrCtx, mgr)
		Expect(err).NotTo(HaveOccurred())
		Expect((&PrePullReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), PrePull: prePull,
			WorkloadCache: DefaultWorkloadCache(), ProgramImage: prePullImage, Recorder: recorder}).SetupWithManager(mgr, prePull)).To(Succeed())
		nodes, err := InformerStore(mgrCtx, mgr.GetCache(), &corev1.Node{})
		Expect(err).NotTo(HaveOccurred())
		Expect((&ProtectionReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
			Clock: clock.RealClock{}, Metrics: metrics.New(registry), WorkloadCache: DefaultWorkloadCache(),
			InstanceManagers: storage.NewInstanceManagerIndex(mgr.GetCache()), Nodes: nodes, PrePull: prePull,
			ImagePullEstimate: 30 * time.Second}).SetupWithManager(mgr)).To(Succeed())
		go func() {
			defer GinkgoRecover()
			defer close(stopped)
			Expect(mgr.Start(mgrCtx)).To(Succeed())
		}()
	})

	eventually := func(actual any) AsyncAssertion { return Eventually(actual).WithTimeout(15 * time.Second) }

	It("keeps the images on the gateway's candidate nodes, and reports them warm or cold", func() {
		w := newWorld(suiteCtx)
		for _, n := range []string{"a", "b", "c", "d"} {
			w.addNode(n, true)
			// The API server taints new nodes not-ready; the node-lifecycle
			// controller, which envtest lacks, lifts it once they are Ready.
			w.untaint(n, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
		}
		g := w.addGateway("gw", "a", "b", withNodeSelector(w.nodeLabels()))
		t := w.prePullTemplate("s3gw")
		w.nhc(t)
		daemonSet := func(gm Gomega) *appsv1.DaemonSet {
			list := &appsv1.DaemonSetList{}
			gm.Expect(w.c.List(w.ctx, list, client.InNamespace(w.ns))).To(Succeed())
			gm.Expect(list.Items).To(HaveLen(1))
			return &list.Items[0]
		}
		images := func(gm Gomega) *s3gwv1alpha1.ImageWarmth {
			gm.Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			gm.Expect(t.Status.Pods).To(HaveLen(1))
			gm.Expect(t.Status.Pods[0].Protected).To(BeTrue(), "%+v", t.Status.Pods[0])
			gm.Expect(t.Status.Pods[0].Images).NotTo(BeNil())
			return t.Status.Pods[0].Images
		}
		warmGauge := func(reason string) float64 {
			return (&stepper{registry: registry}).metric("s3gw_remediation_pod_warm_candidate_nodes", map[string]string{
				"template_namespace": t.Namespace, "template": t.Name, "namespace": g.ns, "pod": g.pod.Name, "node": g.node, "reason": reason})
		}

		By("Creating the DaemonSet at once; no pre-pull pod runs yet: all three candidates cold")
		var ds *appsv1.DaemonSet
		eventually(func(gm Gomega) { ds = daemonSet(gm) }).Should(Succeed())
		Expect(ds.Spec.Template.Spec.NodeSelector).To(Equal(w.nodeLabels()))
		Expect(affinityOf(*ds)).To(Equal(notOn(g.node)))
		eventually(images).Should(And(HaveField("Reason", s3gwv1alpha1.ReasonAllCandidatesCold),
			HaveField("CandidateNodes", BeEquivalentTo(3)), HaveField("WarmNodes", BeZero()),
			HaveField("ColdNodes", Equal([]string{w.nodeName("b"), w.nodeName("c"), w.nodeName("d")}))))
		Expect(t.Status.Pods[0].ExpectedRTO.Duration).To(Equal(defaultRTO+30*time.Second), "a cold node adds the pull estimate")
		Expect(t.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionImagesWarm, metav1.ConditionFalse, s3gwv1alpha1.ReasonAllCandidatesCold))
		Expect(t.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionProtected, metav1.ConditionTrue, s3gwv1alpha1.ReasonAllPodsProtected),
			"cold is a warning, not unprotected")
		Expect(warmGauge(s3gwv1alpha1.ReasonAllCandidatesCold)).To(BeZero())

		By("The pre-pull pods running on b and c; d cannot pull")
		runPrePullPod(w, ds, "b", prePullRunning)
		runPrePullPod(w, ds, "c", prePullRunning)
		runPrePullPod(w, ds, "d", prePullBackingOff)
		eventually(images).Should(And(HaveField("Reason", s3gwv1alpha1.ReasonImagePullFailing), HaveField("WarmNodes", BeEquivalentTo(2)),
			HaveField("Message", ContainSubstring("unauthorized: access denied"))))
		Expect(warmGauge(s3gwv1alpha1.ReasonImagePullFailing)).To(Equal(2.0))
		eventually(func(gm Gomega) []string { return templateEvents(gm, w, t) }).Should(ContainElement(protection.EventImagePullFailing))

		By("d pulls after all: every candidate warm, no pull in the RTO")
		runPrePullPod(w, ds, "d", prePullRunning)
		eventually(images).Should(And(HaveField("Reason", s3gwv1alpha1.ReasonAllCandidatesWarm), HaveField("WarmNodes", BeEquivalentTo(3))))
		Expect(t.Status.Pods[0].ExpectedRTO.Duration).To(Equal(defaultRTO))
		Expect(t.Status.Conditions).To(haveCondition(s3gwv1alpha1.ConditionImagesWarm, metav1.ConditionTrue, s3gwv1alpha1.ReasonAllCandidatesWarm))
		eventually(func(gm Gomega) []string { return templateEvents(gm, w, t) }).Should(ContainElement(protection.EventReplacementWarm))

		By("An upgrade: the DaemonSet follows the image, the old pods count cold until replaced")
		Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(g.pod), g.pod)).To(Succeed())
		g.pod.Spec.Containers[0].Image = "quay.io/s3gw/s3gw:v1.0"
		Expect(w.c.Update(w.ctx, g.pod)).To(Succeed())
		eventually(func(gm Gomega) string {
			return daemonSet(gm).Spec.Template.Annotations[internalprepull.ImagesAnnotation]
		}).Should(Equal("quay.io/s3gw/s3gw:v1.0"))
		eventually(images).Should(HaveField("Reason", s3gwv1alpha1.ReasonAllCandidatesCold))
		eventually(func(gm Gomega) []string { return templateEvents(gm, w, t) }).Should(ContainElement(protection.EventReplacementCold))

		By("Turning pre-pull off: the DaemonSet goes, the report forgets warmth")
		w.setPrePull(t, false)
		eventually(func(gm Gomega) {
			list := &appsv1.DaemonSetList{}
			gm.Expect(w.c.List(w.ctx, list, client.InNamespace(w.ns))).To(Succeed())
			gm.Expect(list.Items).To(BeEmpty())
		}).Should(Succeed())
		eventually(func(gm Gomega) {
			gm.Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			gm.Expect(t.Status.Pods).To(ConsistOf(HaveField("Images", BeNil())))
			gm.Expect(t.Status.Conditions).NotTo(ContainElement(HaveField("Type", s3gwv1alpha1.ConditionImagesWarm)))
		}).Should(Succeed())
	})
})

// templateEvents are the reasons of the events.k8s.io Events about t.
func templateEvents(gm Gomega, w *world, t *s3gwv1alpha1.S3GWRemediationTemplate) []string {
	list := &eventsv1.EventList{}
	gm.Expect(w.c.List(w.ctx, list, client.InNamespace(w.ns))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Name == t.Name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}
