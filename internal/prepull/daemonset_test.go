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

package prepull

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

const programImage = "quay.io/s3gw/s3gw-remediation:v0.1.0"

func input(pod *corev1.Pod, spec s3gwv1alpha1.PrePullSpec) Input {
	gw, _ := GatewayOf(pod)
	return Input{Gateway: gw, Pod: pod, Spec: spec, ProgramImage: programImage, Templates: []string{"s3gw-remediation-system/s3gw"}}
}

func TestDaemonSetWithInitContainers(t *testing.T) {
	g := NewWithT(t)
	pod := gatewayPod("gw", "node-a", 0)
	pod.Spec.NodeSelector = map[string]string{"pool": "s3gw"}
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "s3gw", Effect: corev1.TaintEffectNoSchedule}}
	ds := DaemonSet(input(pod, s3gwv1alpha1.PrePullSpec{Enabled: true, PriorityClassName: "prepull"}))

	g.Expect(ds.Namespace).To(Equal("s3gw"))
	g.Expect(ds.Name).To(Equal("demo-s3gw-prepull"))
	g.Expect(ds.Labels).To(HaveKeyWithValue(Label, "demo-s3gw-prepull"))
	g.Expect(ds.Spec.Selector.MatchLabels).To(Equal(map[string]string{Label: "demo-s3gw-prepull"}))
	g.Expect(ds.Spec.Template.Labels).To(HaveKeyWithValue(Label, "demo-s3gw-prepull"))
	g.Expect(ds.OwnerReferences).To(HaveLen(1))
	g.Expect(ds.OwnerReferences[0].Kind).To(Equal("ReplicaSet"))
	g.Expect(*ds.OwnerReferences[0].Controller).To(BeFalse(), "the ReplicaSet does not control it")
	g.Expect(*ds.OwnerReferences[0].BlockOwnerDeletion).To(BeFalse(), "it never holds the gateway's deletion")
	g.Expect(ds.Annotations).To(HaveKeyWithValue(TemplatesAnnotation, "s3gw-remediation-system/s3gw"))
	g.Expect(ds.Spec.Template.Annotations).To(HaveKeyWithValue(ImagesAnnotation, "quay.io/s3gw/s3gw:v0.99,quay.io/s3gw/ui:v0.99"))

	spec := ds.Spec.Template.Spec
	g.Expect(spec.NodeSelector).To(Equal(pod.Spec.NodeSelector))
	g.Expect(spec.Tolerations).To(Equal(pod.Spec.Tolerations))
	g.Expect(spec.ImagePullSecrets).To(Equal(pod.Spec.ImagePullSecrets))
	g.Expect(spec.PriorityClassName).To(Equal("prepull"))
	g.Expect(*spec.AutomountServiceAccountToken).To(BeFalse())
	g.Expect(spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms).To(Equal([]corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-a"}}},
	}}), "every node but the gateway's")
	g.Expect(spec.Volumes).To(HaveLen(1))
	g.Expect(spec.Volumes[0].EmptyDir).NotTo(BeNil())

	g.Expect(spec.InitContainers).To(HaveLen(3))
	install, s3gw, ui := spec.InitContainers[0], spec.InitContainers[1], spec.InitContainers[2]
	g.Expect(install.Image).To(Equal(programImage))
	g.Expect(install.Command).To(Equal([]string{"/prepull", "install", "/s3gw-remediation-prepull/prepull"}))
	for i, c := range []corev1.Container{s3gw, ui} {
		g.Expect(c.Name).To(Equal([]string{"pull-0", "pull-1"}[i]))
		g.Expect(c.Image).To(Equal(Images(pod)[i]))
		g.Expect(c.Command).To(Equal([]string{"/s3gw-remediation-prepull/prepull", "pulled"}), "never the image's own entrypoint")
		g.Expect(c.Args).To(BeEmpty())
		g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))
		g.Expect(c.VolumeMounts).To(Equal([]corev1.VolumeMount{{Name: "program", MountPath: "/s3gw-remediation-prepull", ReadOnly: true}}),
			"none of the gateway's volumes")
	}
	g.Expect(spec.Containers).To(HaveLen(1))
	g.Expect(spec.Containers[0].Command).To(Equal([]string{"/prepull", "idle"}))
	g.Expect(spec.Containers[0].Image).To(Equal(programImage))
	expectRestricted(g, ds.Spec.Template)
}

func TestDaemonSetWithImageVolumes(t *testing.T) {
	g := NewWithT(t)
	pod := gatewayPod("gw", "node-a", 0)
	ds := DaemonSet(input(pod, s3gwv1alpha1.PrePullSpec{Enabled: true, Mechanism: s3gwv1alpha1.PrePullImageVolume}))
	spec := ds.Spec.Template.Spec
	g.Expect(spec.InitContainers).To(BeEmpty())
	g.Expect(spec.Volumes).To(HaveLen(2))
	for i, v := range spec.Volumes {
		g.Expect(v.Image).NotTo(BeNil())
		g.Expect(v.Image.Reference).To(Equal(Images(pod)[i]))
	}
	g.Expect(spec.Containers).To(HaveLen(1))
	g.Expect(spec.Containers[0].VolumeMounts).To(HaveLen(2))
	g.Expect(spec.Containers[0].VolumeMounts[0].ReadOnly).To(BeTrue())
	expectRestricted(g, ds.Spec.Template)
}

// expectRestricted checks the pod template against the restricted Pod
// Security Standard, as PodSecurity admission in a gateway's namespace
// would.
func expectRestricted(g *WithT, template corev1.PodTemplateSpec) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	g.Expect(err).NotTo(HaveOccurred())
	result := policy.AggregateCheckResults(evaluator.EvaluatePod(
		api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}, &template.ObjectMeta, &template.Spec))
	g.Expect(result.Allowed).To(BeTrue(), "%s: %s", result.ForbiddenReason(), result.ForbiddenDetail())
}

func TestDaemonSetKeepsTheGatewaysAffinityAndLeavesItsNodeOut(t *testing.T) {
	g := NewWithT(t)
	pod := gatewayPod("gw", "node-a", 0)
	pool := corev1.NodeSelectorRequirement{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"s3gw"}}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpExists}
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{pool}}, {MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}},
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}}}}
	ds := DaemonSet(input(pod, s3gwv1alpha1.PrePullSpec{Enabled: true}))
	notHome := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-a"}}
	affinity := ds.Spec.Template.Spec.Affinity.NodeAffinity
	g.Expect(affinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms).To(Equal([]corev1.NodeSelectorTerm{
		{MatchExpressions: []corev1.NodeSelectorRequirement{pool}, MatchFields: []corev1.NodeSelectorRequirement{notHome}},
		{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: []corev1.NodeSelectorRequirement{notHome}},
	}))
	g.Expect(affinity.PreferredDuringSchedulingIgnoredDuringExecution).To(BeEmpty())
	g.Expect(pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields).
		To(BeEmpty(), "the gateway's pod is not changed")
}

func TestSpecHashFollowsWhatIsWritten(t *testing.T) {
	g := NewWithT(t)
	pod := gatewayPod("gw", "node-a", 0)
	base := DaemonSet(input(pod, s3gwv1alpha1.PrePullSpec{Enabled: true})).Annotations[SpecHashAnnotation]
	g.Expect(base).NotTo(BeEmpty())
	g.Expect(DaemonSet(input(pod, s3gwv1alpha1.PrePullSpec{Enabled: true})).Annotations[SpecHashAnnotation]).To(Equal(base), "stable")

	upgraded := pod.DeepCopy()
	upgraded.Spec.Containers[0].Image = "quay.io/s3gw/s3gw:v1.0"
	moved := pod.DeepCopy()
	moved.Spec.NodeName = "node-b"
	rolled := pod.DeepCopy()
	rolled.OwnerReferences[0].UID = "new-rs"
	for name, p := range map[string]*corev1.Pod{"image": upgraded, "node": moved, "owner": rolled} {
		g.Expect(DaemonSet(input(p, s3gwv1alpha1.PrePullSpec{Enabled: true})).Annotations[SpecHashAnnotation]).NotTo(Equal(base), name)
	}
	in := input(pod, s3gwv1alpha1.PrePullSpec{Enabled: true})
	in.Templates = append(in.Templates, "s3gw-remediation-system/other")
	g.Expect(DaemonSet(in).Annotations[SpecHashAnnotation]).NotTo(Equal(base), "templates")
	g.Expect(DaemonSet(input(pod, s3gwv1alpha1.PrePullSpec{Enabled: true, Mechanism: s3gwv1alpha1.PrePullImageVolume})).
		Annotations[SpecHashAnnotation]).NotTo(Equal(base), "mechanism")
}
