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

package v1alpha1

// PrePullMechanism is how a pre-pull pod makes its node pull the gateway's
// images (docs/warm-replacement.md, "Mechanism").
// +kubebuilder:validation:Enum=InitContainer;ImageVolume
type PrePullMechanism string

const (
	// PrePullInitContainer gives the pre-pull pod one init container per
	// image, whose command is a static no-op program copied in from the
	// operator's image: the kubelet pulls the image and starts a container
	// of it that exits at once, without the gateway's program, volumes or
	// data. Works with every Kubernetes version and container runtime.
	PrePullInitContainer PrePullMechanism = "InitContainer"
	// PrePullImageVolume mounts each image read-only into the pre-pull
	// pod's idle container as an image volume (KEP-4639): the kubelet pulls
	// it and never starts a container of it. Needs Kubernetes 1.35 or later
	// (the ImageVolume feature, on by default since 1.35) and a container
	// runtime that mounts image volumes (containerd 2.1+, CRI-O 1.31+) on
	// every candidate node; elsewhere the pod stays ContainerCreating and
	// the node is reported cold.
	PrePullImageVolume PrePullMechanism = "ImageVolume"
)

// PrePullSpec keeps the images of each gateway the template selects on the
// nodes where its replacement may be scheduled, so that the replacement
// starts without pulling them (docs/warm-replacement.md).
type PrePullSpec struct {
	// Enabled runs, for each gateway the template selects, a DaemonSet of
	// idle pods with tiny requests in the gateway's namespace, on the nodes
	// its replacement may be scheduled to (the gateway's node selector,
	// required node affinity and tolerations, its own node left out). They
	// follow the gateway's images and are deleted when the gateway, or this
	// setting, goes. The protection report then says on how many of those
	// nodes the images are present (status.pods[].images).
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Mechanism is InitContainer (default: any cluster) or ImageVolume
	// (Kubernetes 1.35+ with containerd 2.1+ or CRI-O 1.31+ on every node).
	// +kubebuilder:default=InitContainer
	// +optional
	Mechanism PrePullMechanism `json:"mechanism,omitempty"`

	// PriorityClassName is the pre-pull pods' PriorityClass; empty means
	// the cluster's default (usually priority 0). A class with a negative
	// value and preemptionPolicy Never lets any other pod preempt them.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be a PriorityClass name: at most 253 lowercase letters, digits, '-' and '.', beginning and ending with a letter or digit"
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// MechanismOrDefault is spec.prePull.mechanism, or its default.
func (p PrePullSpec) MechanismOrDefault() PrePullMechanism {
	if p.Mechanism == "" {
		return PrePullInitContainer
	}
	return p.Mechanism
}

// ImageWarmth says whether a gateway's images are present on the nodes its
// replacement may be scheduled to, as its pre-pull pods' status shows. A
// cold candidate adds an image pull to the failover: a warning, not a
// reason the gateway is unprotected.
type ImageWarmth struct {
	// Reason is AllCandidatesWarm, SomeCandidatesCold, AllCandidatesCold,
	// ImagePullFailing or NoCandidateNode.
	Reason string `json:"reason"`
	// Message explains the reason: which candidates are cold and why
	// (no pre-pull pod yet, pulling, the kubelet's pull error).
	// +optional
	Message string `json:"message,omitempty"`
	// CandidateNodes counts the nodes the replacement may be scheduled to:
	// Ready, other than the gateway's node, matching its node selector and
	// required node affinity, with every NoSchedule and NoExecute taint
	// tolerated.
	CandidateNodes int32 `json:"candidateNodes"`
	// WarmNodes counts the candidates where the gateway's pre-pull pod
	// shows every image of the gateway pulled.
	WarmNodes int32 `json:"warmNodes"`
	// ColdNodes names the cold candidates, at most ten, in name order.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +optional
	ColdNodes []string `json:"coldNodes,omitempty"`
}

// ConditionImagesWarm, on a template with spec.prePull.enabled, is True
// when every candidate node of every selected gateway holds the gateway's
// images, False when one is cold, has no candidate node left, or cannot
// pull an image.
const ConditionImagesWarm = "ImagesWarm"

// Reasons of a gateway's image warmth (status.pods[].images.reason), also
// those of the ImagesWarm condition (docs/warm-replacement.md).
const (
	// ReasonAllCandidatesWarm: every candidate node holds the images.
	ReasonAllCandidatesWarm = "AllCandidatesWarm"
	// ReasonSomeCandidatesCold: some candidate nodes do not hold them yet;
	// a replacement scheduled there pulls them first.
	ReasonSomeCandidatesCold = "SomeCandidatesCold"
	// ReasonAllCandidatesCold: no candidate node holds them.
	ReasonAllCandidatesCold = "AllCandidatesCold"
	// ReasonImagePullFailing: the kubelet of a candidate node cannot pull
	// an image (wrong name or secret, registry down) and backs off.
	ReasonImagePullFailing = "ImagePullFailing"
	// ReasonNoCandidateNode: no node other than the gateway's own is Ready,
	// matches its node selector and affinity and tolerates its taints: a
	// replacement would find no node.
	ReasonNoCandidateNode = "NoCandidateNode"
)
