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
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// prePullDeadline bounds how long the real DaemonSet controller, scheduler,
// garbage collector and kwok take to follow the operator's DaemonSet.
const prePullDeadline = time.Minute

var _ = Describe("Warm replacement", func() {
	It("runs the pre-pull pods on exactly the gateway's three candidate nodes, follows its image, and goes with the template", func(ctx SpecContext) {
		// Victims a, b and c and the spare may run the gateway; d may not.
		s := newScenario(ctx, "prepull", 4)
		a, b, c, d := s.victims[0], s.victims[1], s.victims[2], s.victims[3]
		_, err := env.EnableRemediation(ctx, harness.Remediation{Name: s.name, NodeSelector: map[string]string{poolLabel: s.name},
			Spec:    s3gwv1alpha1.S3GWRemediationSpec{Namespaces: []string{s.namespace()}},
			PrePull: s3gwv1alpha1.PrePullSpec{Enabled: true}})
		Expect(err).NotTo(HaveOccurred())
		g, err := env.DeployGateway(ctx, harness.GatewaySpec{Namespace: s.namespace(), Release: "demo", Node: a,
			Failover: []string{b, c, s.spare}, ReplicaNodes: []string{b, c}})
		Expect(err).NotTo(HaveOccurred())
		candidates := []string{b, c, s.spare}

		By("Running a pre-pull pod on each candidate node, none on " + a + " (the gateway's) or " + d + " (outside its affinity)")
		Eventually(ctx, prePullPods(ctx, g)).WithTimeout(prePullDeadline).Should(ConsistOf(onNodesWith(candidates, "quay.io/s3gw/s3gw:latest")))
		w, err := env.WaitForWarmCandidates(ctx, s.name, g, reportDeadline)
		Expect(err).NotTo(HaveOccurred())
		Expect(w.CandidateNodes).To(BeEquivalentTo(3))
		Expect(w.WarmNodes).To(BeEquivalentTo(3))
		kubectlGet(ctx, "pre-pull pods", "get", "pods", "-n", g.Namespace, "-l", prepull.Label, "-o", "wide")
		kubectlGet(ctx, "warmth per pod", "get", "s3gwremediationtemplates", "-n", harness.TemplateNamespace, s.name,
			"-o", `jsonpath={range .status.pods[*]}{.namespace}/{.name} on {.node}: images={.images.reason} {.images.warmNodes}/{.images.candidateNodes} expectedRTO={.expectedRTO}{"\n"}{end}`)

		By("Upgrading the gateway's image")
		deployment := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: g.Deployment}, deployment)).To(Succeed())
		patch := client.MergeFrom(deployment.DeepCopy())
		deployment.Spec.Template.Spec.Containers[0].Image = "quay.io/s3gw/s3gw:v0.99.0"
		Expect(env.Client.Patch(ctx, deployment, patch)).To(Succeed())
		Eventually(ctx, prePullPods(ctx, g)).WithTimeout(prePullDeadline).Should(ConsistOf(onNodesWith(candidates, "quay.io/s3gw/s3gw:v0.99.0")))
		_, err = env.WaitForWarmCandidates(ctx, s.name, g, reportDeadline)
		Expect(err).NotTo(HaveOccurred())

		By("Deleting the template: the DaemonSet and its pods go")
		template := &s3gwv1alpha1.S3GWRemediationTemplate{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.TemplateNamespace, Name: s.name}, template)).To(Succeed())
		Expect(env.Client.Delete(ctx, template)).To(Succeed())
		Eventually(ctx, prePullPods(ctx, g)).WithTimeout(prePullDeadline).Should(BeEmpty())
		Eventually(ctx, func(gm Gomega) []appsv1.DaemonSet {
			list := &appsv1.DaemonSetList{}
			gm.Expect(env.Client.List(ctx, list, client.InNamespace(g.Namespace))).To(Succeed())
			return list.Items
		}).WithTimeout(prePullDeadline).Should(BeEmpty())
	}, SpecTimeout(specTimeout))
})

// prePullPods lists the gateway's pre-pull pods that are not being deleted.
func prePullPods(ctx context.Context, g *harness.Gateway) func(Gomega) []corev1.Pod {
	return func(gm Gomega) []corev1.Pod {
		list := &corev1.PodList{}
		gm.Expect(env.Client.List(ctx, list, client.InNamespace(g.Namespace), client.HasLabels{prepull.Label})).To(Succeed())
		var out []corev1.Pod
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				out = append(out, p)
			}
		}
		return out
	}
}

// onNodesWith matches one Ready pre-pull pod per node, each pulling the image.
func onNodesWith(nodes []string, image string) []OmegaMatcher {
	out := make([]OmegaMatcher, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, And(HaveField("Spec.NodeName", n),
			HaveField("ObjectMeta.Annotations", HaveKeyWithValue(prepull.ImagesAnnotation, image)),
			Satisfy(func(p corev1.Pod) bool { return harness.PodReady(&p) })))
	}
	return out
}
