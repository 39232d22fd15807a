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
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Annotations of a pre-pull DaemonSet and its pod template.
const (
	// ImagesAnnotation, on the pod template (so on every pre-pull pod),
	// lists the images the pod pulls, comma-separated: the protection
	// report counts a node warm only for the gateway's current images.
	ImagesAnnotation = "s3gw-remediation.medik8s.io/prepull-images"
	// TemplatesAnnotation lists the templates that want the DaemonSet, as
	// namespace/name, comma-separated.
	TemplatesAnnotation = "s3gw-remediation.medik8s.io/prepull-templates"
	// SpecHashAnnotation is a hash of what the operator wrote: the
	// DaemonSet is rewritten only when it changes, so the operator's cache
	// of DaemonSets holds their metadata alone.
	SpecHashAnnotation = "s3gw-remediation.medik8s.io/prepull-spec-hash"
)

// The pre-pull program (cmd/prepull) in the operator's image, and where a
// pod's init containers find its copy.
const (
	// Program is the program's path in the operator's image.
	Program = "/prepull"
	// programDir is the emptyDir the install container copies it into, at
	// the same path in every container that mounts it.
	programDir  = "/s3gw-remediation-prepull"
	programCopy = programDir + "/prepull"
	// The program's commands.
	commandInstall = "install"
	commandPulled  = "pulled"
	commandIdle    = "idle"
)

// Container names; warmth reads their status.
const (
	// IdleContainer is the pre-pull pod's only container: the operator's
	// image, waiting for SIGTERM.
	IdleContainer    = "idle"
	installContainer = "install"
	// pullPrefix names the init container of each image: pull-0, pull-1, …
	pullPrefix = "pull-"
)

// nonRoot is the user every pre-pull container runs as: distroless's
// nonroot, not a user of the gateway's image.
const nonRoot = 65532

// Requests and limits of every pre-pull container. The pod asks for the
// largest of its containers' (init containers run one after another):
// 1m CPU and 8 MiB per node and gateway (docs/warm-replacement.md, "Cost").
var (
	requests = corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1m"),
		corev1.ResourceMemory: resource.MustParse("8Mi"),
	}
	limits = corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("20m"),
		corev1.ResourceMemory: resource.MustParse("32Mi"),
	}
	// programVolumeSize bounds the emptyDir the program is copied into
	// (about 1.5 MiB).
	programVolumeSize = resource.MustParse("16Mi")
)

// maxUnavailable is how many pre-pull pods a rollout (an image change)
// replaces at once: a quarter of the nodes pull at a time, so that an
// upgrade does not send every node to the registry at the same moment.
var maxUnavailable = intstr.FromString("25%")

// Input is what one gateway's DaemonSet is built from.
type Input struct {
	Gateway Gateway
	// Pod is the gateway's Home pod: its images, pull secrets, runtime
	// class, node selector, required node affinity and tolerations, and
	// its node, which the DaemonSet leaves out.
	Pod *corev1.Pod
	// Spec is the template's spec.prePull (the first template's, by
	// namespace and name, when several select the gateway).
	Spec s3gwv1alpha1.PrePullSpec
	// ProgramImage is the operator's image, which holds Program.
	ProgramImage string
	// Templates are the templates that want the DaemonSet, namespace/name.
	Templates []string
}

// DaemonSet is the gateway's pre-pull DaemonSet: in the gateway's
// namespace, owned by the gateway's controller, running one tiny pod on
// every node the gateway's replacement may be scheduled to, whose only
// work is to make the kubelet pull the gateway's images.
func DaemonSet(in Input) *appsv1.DaemonSet {
	name := in.Gateway.DaemonSetName()
	images := Images(in.Pod)
	podLabels := map[string]string{
		Label:                          name,
		"app.kubernetes.io/name":       "s3gw-remediation-prepull",
		"app.kubernetes.io/managed-by": "s3gw-remediation",
	}
	owner := in.Gateway.Owner
	owner.Controller, owner.BlockOwnerDeletion = ptr.To(false), ptr.To(false)
	ds := &appsv1.DaemonSet{
		TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: in.Gateway.Namespace, Name: name, Labels: podLabels,
			Annotations:     map[string]string{TemplatesAnnotation: strings.Join(in.Templates, ",")},
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{Label: name}},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &maxUnavailable}},
			RevisionHistoryLimit: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(podLabels),
					Annotations: map[string]string{ImagesAnnotation: strings.Join(images, ",")}},
				Spec: podSpec(in, images),
			},
		},
	}
	ds.Annotations[SpecHashAnnotation] = specHash(ds)
	return ds
}

// podSpec runs the pre-pull program as a non-root user without a service
// account token, on the gateway's nodes but its own, and holds the images
// by the spec's mechanism. It passes the restricted Pod Security Standard.
func podSpec(in Input, images []string) corev1.PodSpec {
	gw := in.Pod.Spec
	spec := corev1.PodSpec{
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		PriorityClassName:             in.Spec.PriorityClassName,
		ImagePullSecrets:              slices.Clone(gw.ImagePullSecrets),
		RuntimeClassName:              gw.RuntimeClassName,
		NodeSelector:                  gw.NodeSelector,
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: awayFrom(gw.Affinity, gw.NodeName)}},
		Tolerations: slices.Clone(gw.Tolerations),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](nonRoot), RunAsGroup: ptr.To[int64](nonRoot),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	idle := container(IdleContainer, in.ProgramImage, Program, commandIdle)
	switch in.Spec.MechanismOrDefault() {
	case s3gwv1alpha1.PrePullImageVolume:
		for i, image := range images {
			volume := fmt.Sprintf("image-%d", i)
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
				Image: &corev1.ImageVolumeSource{Reference: image, PullPolicy: corev1.PullIfNotPresent}}})
			idle.VolumeMounts = append(idle.VolumeMounts, corev1.VolumeMount{Name: volume,
				MountPath: "/images/" + strconv.Itoa(i), ReadOnly: true})
		}
	default:
		const volume = "program"
		spec.Volumes = []corev1.Volume{{Name: volume, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &programVolumeSize}}}}
		install := container(installContainer, in.ProgramImage, Program, commandInstall, programCopy)
		install.VolumeMounts = []corev1.VolumeMount{{Name: volume, MountPath: programDir}}
		spec.InitContainers = []corev1.Container{install}
		for i, image := range images {
			// The image's own entrypoint never runs: the command is the
			// copied program, which exits at once, and no volume of the
			// gateway is mounted.
			pull := container(pullPrefix+strconv.Itoa(i), image, programCopy, commandPulled)
			pull.VolumeMounts = []corev1.VolumeMount{{Name: volume, MountPath: programDir, ReadOnly: true}}
			spec.InitContainers = append(spec.InitContainers, pull)
		}
	}
	spec.Containers = []corev1.Container{idle}
	return spec
}

func container(name, image string, command ...string) corev1.Container {
	return corev1.Container{
		Name: name, Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Command: command,
		Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

// awayFrom is the gateway's required node affinity with its own node left
// out: every term also requires another node name. The node selector is
// copied as it is.
func awayFrom(affinity *corev1.Affinity, node string) *corev1.NodeSelector {
	notHome := corev1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}
	var terms []corev1.NodeSelectorTerm
	if affinity != nil && affinity.NodeAffinity != nil && affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			t = *t.DeepCopy()
			t.MatchFields = append(t.MatchFields, notHome)
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		terms = []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{notHome}}}
	}
	return &corev1.NodeSelector{NodeSelectorTerms: terms}
}

// specHash hashes what the operator writes of a DaemonSet: labels, the
// templates annotation, owners and spec, in the API's protobuf encoding
// (the one the client writes with; maps in key order). Its generated
// marshallers need no reflection, where encoding/json would keep field
// tables for the whole pod spec for the life of the manager.
func specHash(ds *appsv1.DaemonSet) string {
	meta := metav1.ObjectMeta{Labels: ds.Labels, OwnerReferences: ds.OwnerReferences,
		Annotations: map[string]string{TemplatesAnnotation: ds.Annotations[TemplatesAnnotation]}}
	h := fnv.New64a()
	for _, part := range []interface{ Marshal() ([]byte, error) }{&meta, &ds.Spec} {
		data, err := part.Marshal()
		if err != nil {
			panic(err) // API types always encode
		}
		_, _ = h.Write(data)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
