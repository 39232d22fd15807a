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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionProtected, on a template, is True when every pod it selects
// would be moved off its node if that node failed now.
const ConditionProtected = "Protected"

// Reasons of the protection report (docs/troubleshooting.md, "Is my s3gw
// protected?"). A pod that would fail over has ReasonPodProtected; one that
// would not has the reason of the step that would hold it: these, or the
// remediation's own NoHealthyReplica, LonghornUnavailable, ReplicasUnreachable
// and PodFinalizers.
const (
	// ReasonPodProtected: an evidence source would hold, a healthy replica
	// is elsewhere, and a NodeHealthCheck would remediate the node.
	ReasonPodProtected = "Protected"
	// ReasonProtectedWithoutFencing: fencing.mode is Disabled; the pod would
	// move without any evidence that its node is fenced (unsafe).
	ReasonProtectedWithoutFencing = "ProtectedWithoutFencing"
	// ReasonNoFencingEvidence: no enabled evidence source would hold.
	ReasonNoFencingEvidence = "NoFencingEvidence"
	// ReasonNeedsProofOfShutdown: only storage isolation would hold, and the
	// OutOfServiceTaint release needs proof that the node is off.
	ReasonNeedsProofOfShutdown = "NeedsProofOfShutdown"
	// ReasonNotLonghornRWO: a volume of the pod is not a Longhorn RWO volume.
	ReasonNotLonghornRWO = "NotLonghornRWO"
	// ReasonNoNodeHealthCheck: no NodeHealthCheck that references the
	// template watches the pod's node, or NodeHealthCheck is not installed.
	ReasonNoNodeHealthCheck = "NoNodeHealthCheck"
	// ReasonAllPodsProtected, ReasonPodsUnprotected and ReasonNoPodsSelected
	// are the Protected condition's reasons.
	ReasonAllPodsProtected = "AllPodsProtected"
	ReasonPodsUnprotected  = "PodsUnprotected"
	ReasonNoPodsSelected   = "NoPodsSelected"
)

// S3GWRemediationTemplateSpec holds the template NodeHealthCheck copies.
type S3GWRemediationTemplateSpec struct {
	// Template is copied into every S3GWRemediation NHC creates.
	Template S3GWRemediationTemplateResource `json:"template"`

	// PrePull keeps the images of the gateways the template selects on the
	// nodes their replacements may be scheduled to (docs/warm-replacement.md).
	// Off unless set; the chart's default template turns it on.
	// +optional
	PrePull PrePullSpec `json:"prePull,omitzero"`
}

// S3GWRemediationTemplateResource is the part NHC copies: spec.template.spec.
type S3GWRemediationTemplateResource struct {
	// Spec becomes the S3GWRemediation's spec.
	// +kubebuilder:default={}
	Spec S3GWRemediationSpec `json:"spec"`
}

// S3GWRemediationTemplateStatus is the protection report: for each pod the
// template selects, whether it would be moved off its node if that node
// failed now, and how fast.
type S3GWRemediationTemplateStatus struct {
	// Protection is "<protected pods>/<selected pods>", e.g. 2/3.
	// +optional
	Protection string `json:"protection,omitempty"`

	// ProtectedPods counts the selected pods that would fail over.
	// +optional
	ProtectedPods int32 `json:"protectedPods,omitempty"`

	// SelectedPods counts the pods the template selects, on a node.
	// +optional
	SelectedPods int32 `json:"selectedPods,omitempty"`

	// ExpectedRTO is the longest expected RTO among the protected pods.
	// +optional
	ExpectedRTO *metav1.Duration `json:"expectedRTO,omitempty"`

	// NodeHealthChecks are the NodeHealthChecks that reference the template.
	// +listType=atomic
	// +optional
	NodeHealthChecks []string `json:"nodeHealthChecks,omitempty"`

	// Pods is the report of each selected pod, by namespace and name.
	// +listType=atomic
	// +optional
	Pods []PodProtection `json:"pods,omitempty"`

	// Conditions: Protected, and ImagesWarm with spec.prePull.enabled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the template generation the report is for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// PodProtection says whether one s3gw pod would be moved off its node if
// that node failed now.
type PodProtection struct {
	// Namespace and Name of the pod.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Node the pod runs on.
	Node string `json:"node"`
	// Protected is true when the pod would fail over.
	Protected bool `json:"protected"`
	// Reason is Protected, or why it would not fail over.
	Reason string `json:"reason"`
	// Message explains the reason and, when unprotected, what to fix.
	// +optional
	Message string `json:"message,omitempty"`
	// Evidence names the evidence sources that would prove the node fenced.
	// +listType=atomic
	// +optional
	Evidence []string `json:"evidence,omitempty"`
	// NodeHealthChecks are those that would remediate the node with this
	// template.
	// +listType=atomic
	// +optional
	NodeHealthChecks []string `json:"nodeHealthChecks,omitempty"`
	// ExpectedRTO is the failure-to-serving budget: the node-monitor grace
	// period, the NodeHealthCheck's unhealthy duration (plus earlier
	// escalation steps' timeouts) and the measured release time, plus the
	// manager's image pull estimate when a candidate node is cold.
	// +optional
	ExpectedRTO *metav1.Duration `json:"expectedRTO,omitempty"`
	// Volumes are the pod's persistent volumes and their replicas.
	// +listType=atomic
	// +optional
	Volumes []VolumePlacement `json:"volumes,omitempty"`
	// Images says on how many of the nodes the pod's replacement may be
	// scheduled to its images are present; only with spec.prePull.enabled.
	// +optional
	Images *ImageWarmth `json:"images,omitempty"`
}

// VolumePlacement is where a pod's volume keeps its Longhorn replicas.
type VolumePlacement struct {
	// ClaimName is the PVC.
	ClaimName string `json:"claimName"`
	// LonghornVolume is the Longhorn volume, if it is one.
	// +optional
	LonghornVolume string `json:"longhornVolume,omitempty"`
	// Replicas are "<replica>@<node>", with " (unhealthy)" for a replica
	// that is failed or not yet rebuilt.
	// +listType=atomic
	// +optional
	Replicas []string `json:"replicas,omitempty"`
	// HealthyReplicasElsewhere counts healthy replicas on nodes other than
	// the pod's that Longhorn reaches.
	HealthyReplicasElsewhere int32 `json:"healthyReplicasElsewhere"`
}

// S3GWRemediationTemplate is referenced from a NodeHealthCheck's
// remediationTemplate or escalatingRemediations. The operator's webhook adds
// remediation.medik8s.io/multiple-templates-support at admission (its
// template controller later, if the webhook was not served), so NHC uses
// generated CR names and allows several templates in one escalation.
// +kubebuilder:object:root=true
// Its status is the protection report of the pods it selects.
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=s3gwrt;s3gwremediationtemplate
// +kubebuilder:printcolumn:name="Protected",type=string,JSONPath=`.status.protection`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Protected")].reason`
// +kubebuilder:printcolumn:name="RTO",type=string,JSONPath=`.status.expectedRTO`
// +kubebuilder:printcolumn:name="Images",type=string,JSONPath=`.status.conditions[?(@.type=="ImagesWarm")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type S3GWRemediationTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec S3GWRemediationTemplateSpec `json:"spec"`
	// +optional
	Status S3GWRemediationTemplateStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// S3GWRemediationTemplateList contains a list of S3GWRemediationTemplate.
type S3GWRemediationTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []S3GWRemediationTemplate `json:"items"`
}
