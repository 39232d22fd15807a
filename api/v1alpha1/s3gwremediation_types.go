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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// FencingMode says whether the controller needs proof that the failed node is
// fenced before it evicts pods and releases volumes.
// +kubebuilder:validation:Enum=RequireEvidence;Disabled
type FencingMode string

const (
	// FencingModeRequireEvidence acts only once an enabled evidence source
	// shows the node cannot write to the volume any more.
	FencingModeRequireEvidence FencingMode = "RequireEvidence"
	// FencingModeDisabled acts as soon as the node is not Ready. Unsafe: a
	// partitioned node that still runs s3gw may keep writing. For labs and for
	// clusters whose admins fence nodes by hand.
	FencingModeDisabled FencingMode = "Disabled"
)

// ReleaseStrategy and its values are generated from the release strategies'
// descriptors (zz_generated.strategies.go).

// Every spec field is checked at admission, so that a typo is refused by the
// API server rather than failing, or meaning something else, at run time
// (docs/configuration.md, "Validation rules"). The rules match regular
// expressions rather than call the CEL format library (Kubernetes 1.31), so
// that the CRDs install on 1.28, the CSV's minKubeVersion. Every string,
// list and map a rule reads has a bound: the API server refuses a CRD whose
// rules it estimates too costly, and it estimates from those bounds.

// S3GWRemediationSpec says which pods to move off a failed node, when the node
// counts as safe, and how their Longhorn attachments are released.
// Rules treat an absent field as its default: defaults are checked against them unfilled.
// BEGIN descriptors strategy-rules: the release strategies' rules, written by make generate
// +kubebuilder:validation:XValidation:rule="!has(self.release) || !has(self.release.strategy) || self.release.strategy != 'OutOfServiceTaint' || !has(self.fencing) || !has(self.fencing.mode) || self.fencing.mode == 'RequireEvidence'",fieldPath=".release.strategy",message="release.strategy OutOfServiceTaint requires fencing.mode RequireEvidence: it is only for nodes proven down"
// END descriptors
type S3GWRemediationSpec struct {
	// WorkloadSelector selects the pods to move off the failed node. The
	// default matches the s3gw Helm chart's gateway pods, not its UI or COSI
	// pods. It must not be empty. Whatever it matches, DaemonSet pods,
	// static (mirror) pods and pods in the Longhorn namespace are never
	// touched.
	// +kubebuilder:default={matchLabels:{"app.kubernetes.io/name":"s3gw","app.kubernetes.io/component":"gateway"}}
	// +optional
	WorkloadSelector *LabelSelector `json:"workloadSelector,omitempty"`

	// Namespaces limits the pod search. Empty means all namespaces.
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a namespace name: at most 63 lowercase letters, digits and '-', beginning and ending with a letter or digit"
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`

	// Fencing says when the failed node counts as safe to release volumes from.
	// +kubebuilder:default={}
	// +optional
	Fencing FencingSpec `json:"fencing,omitzero"`

	// Release says how the Longhorn attachment is freed from the failed node.
	// +kubebuilder:default={}
	// +optional
	Release ReleaseSpec `json:"release,omitzero"`

	// ReleaseTimeout is how long eviction and release may take once the
	// fencing gate opened: past it, a pod still held (by a finalizer), a
	// volume still attached (by a Longhorn ticket, a VolumeAttachment stuck
	// in deletion, a kubelet's volumesInUse), Longhorn still unavailable or
	// a volume still without a healthy replica elsewhere is reported as
	// Succeeded=False naming what holds. Before it, they are waited for.
	// +kubebuilder:default="2m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:XValidation:rule="size(self) <= 20 && self.matches('^(([0-9]{1,6}([.][0-9]*)?|[.][0-9]+)(h|m|s|ms))+$')",message="must be a duration such as 90s, 2m or 1h30m: numbers of at most 6 digits with units h, m, s or ms, without spaces (no d for days)"
	// +kubebuilder:validation:XValidation:rule="!(size(self) <= 20 && self.matches('^(([0-9]{1,6}([.][0-9]*)?|[.][0-9]+)(h|m|s|ms))+$')) || (duration(self) >= duration('1s') && duration(self) <= duration('24h'))",message="must be between 1s and 24h"
	// +optional
	ReleaseTimeout *metav1.Duration `json:"releaseTimeout,omitempty"`

	// ReplacementTimeout is how long to wait, after the attachments are
	// released, for the replacement pod to be Ready on another node before
	// reporting Succeeded=False.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:XValidation:rule="size(self) <= 20 && self.matches('^(([0-9]{1,6}([.][0-9]*)?|[.][0-9]+)(h|m|s|ms))+$')",message="must be a duration such as 90s, 2m or 1h30m: numbers of at most 6 digits with units h, m, s or ms, without spaces (no d for days)"
	// +kubebuilder:validation:XValidation:rule="!(size(self) <= 20 && self.matches('^(([0-9]{1,6}([.][0-9]*)?|[.][0-9]+)(h|m|s|ms))+$')) || (duration(self) >= duration('1s') && duration(self) <= duration('24h'))",message="must be between 1s and 24h"
	// +optional
	ReplacementTimeout *metav1.Duration `json:"replacementTimeout,omitempty"`
}

// FencingSpec lists the evidence that proves the failed node can no longer
// write. With mode RequireEvidence, one enabled source must hold.
// +kubebuilder:validation:XValidation:rule="!has(self.delegate) || !has(self.mode) || self.mode == 'RequireEvidence'",fieldPath=".delegate",message="fencing.delegate requires fencing.mode RequireEvidence"
// BEGIN descriptors source-rule: the evidence sources' rule, written by make generate
// +kubebuilder:validation:XValidation:rule="(has(self.mode) && self.mode == 'Disabled') || !has(self.outOfServiceTaint) || self.outOfServiceTaint || !has(self.storageIsolation) || self.storageIsolation || (has(self.remediators) && size(self.remediators) > 0) || has(self.delegate)",message="fencing.mode RequireEvidence needs at least one evidence source: outOfServiceTaint, storageIsolation, remediators or delegate"
// END descriptors
type FencingSpec struct {
	// Mode is RequireEvidence (default) or Disabled (unsafe).
	// +kubebuilder:default=RequireEvidence
	// +optional
	Mode FencingMode `json:"mode,omitempty"`

	// OutOfServiceTaint accepts the node.kubernetes.io/out-of-service taint,
	// set by an admin or a fencing remediator, as proof the node is down.
	// +kubebuilder:default=true
	// +optional
	OutOfServiceTaint *bool `json:"outOfServiceTaint,omitempty"`

	// StorageIsolation accepts, for every target volume, that Longhorn reports
	// the node down (Ready=False, KubernetesNodeNotReady or
	// KubernetesNodeGone) and the node holds no replica of the volume: the
	// old engine then has nothing it can write to.
	// +kubebuilder:default=true
	// +optional
	StorageIsolation *bool `json:"storageIsolation,omitempty"`

	// Remediators names other remediation kinds (e.g. FenceAgentsRemediation)
	// whose CR for the same node proves fencing once the named condition is True.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Remediators []RemediatorEvidence `json:"remediators,omitempty"`

	// Delegate names a fencing remediation template from which the
	// controller creates that remediator's CR for the node, as NHC would, and
	// waits for its condition.
	// +optional
	Delegate *DelegateFencing `json:"delegate,omitempty"`
}

// RemediatorEvidence names a remediation kind whose CR for the failed node
// proves fencing when ConditionType is True.
type RemediatorEvidence struct {
	// APIVersion of the remediation CR, e.g. fence-agents-remediation.medik8s.io/v1alpha1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[a-z]([-a-z0-9]{0,61}[a-z0-9])?$') && (!self.contains('/') || self.indexOf('/') <= 253)",message="must be group/version, e.g. fence-agents-remediation.medik8s.io/v1alpha1: a lowercase DNS subdomain, '/' and a version such as v1alpha1 (the version alone for the core group)"
	APIVersion string `json:"apiVersion"`
	// Kind of the remediation CR, e.g. FenceAgentsRemediation.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Z][A-Za-z0-9]*$')",message="must be a kind in UpperCamelCase: a capital letter, then letters and digits"
	// +kubebuilder:validation:XValidation:rule="!self.endsWith('Template')",message="must be the kind of the remediation CR, not of its template, e.g. FenceAgentsRemediation; a template goes in fencing.delegate"
	Kind string `json:"kind"`
	// ConditionType that proves fencing, e.g. FenceAgentActionSucceeded (FAR)
	// or Succeeded (SNR).
	// +kubebuilder:default=Succeeded
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!self.contains('/') || self.indexOf('/') <= 253)",message="must be a condition type, e.g. Succeeded: a name of at most 63 letters, digits, '-', '_' and '.' that begins and ends with a letter or digit, after an optional DNS subdomain and '/'"
	// +optional
	ConditionType string `json:"conditionType,omitempty"`
}

// DelegateFencing references a fencing remediation template.
type DelegateFencing struct {
	// APIVersion of the template, e.g. fence-agents-remediation.medik8s.io/v1alpha1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[a-z]([-a-z0-9]{0,61}[a-z0-9])?$') && (!self.contains('/') || self.indexOf('/') <= 253)",message="must be group/version, e.g. fence-agents-remediation.medik8s.io/v1alpha1: a lowercase DNS subdomain, '/' and a version such as v1alpha1 (the version alone for the core group)"
	APIVersion string `json:"apiVersion"`
	// Kind of the template, e.g. FenceAgentsRemediationTemplate.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Z][A-Za-z0-9]*$')",message="must be a kind in UpperCamelCase: a capital letter, then letters and digits"
	// +kubebuilder:validation:XValidation:rule="size(self) > 8 && self.endsWith('Template')",message="must be a remediation template kind ending in 'Template', e.g. FenceAgentsRemediationTemplate"
	Kind string `json:"kind"`
	// Name of the template.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="must be an object name: at most 253 lowercase letters, digits, '-' and '.', beginning and ending with a letter or digit"
	Name string `json:"name"`
	// Namespace of the template; the fencing CR is created there too, as
	// NHC creates a remediation CR beside its template, so the fencer finds
	// the Secrets the template names (FAR reads them from its CR's
	// namespace). Empty means the S3GWRemediation's own namespace.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a namespace name: at most 63 lowercase letters, digits and '-', beginning and ending with a letter or digit; or leave it out"
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// ConditionType on the created CR that proves fencing.
	// +kubebuilder:default=Succeeded
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!self.contains('/') || self.indexOf('/') <= 253)",message="must be a condition type, e.g. Succeeded: a name of at most 63 letters, digits, '-', '_' and '.' that begins and ends with a letter or digit, after an optional DNS subdomain and '/'"
	// +optional
	ConditionType string `json:"conditionType,omitempty"`
}

// OutOfServiceTaintEnabled reports whether the out-of-service taint counts as
// evidence; unset means the default, true.
func (f FencingSpec) OutOfServiceTaintEnabled() bool {
	return f.OutOfServiceTaint == nil || *f.OutOfServiceTaint
}

// StorageIsolationEnabled reports whether storage isolation counts as
// evidence; unset means the default, true.
func (f FencingSpec) StorageIsolationEnabled() bool {
	return f.StorageIsolation == nil || *f.StorageIsolation
}

// ReleaseSpec configures how attachments are released.
type ReleaseSpec struct {
	// Strategy is ControllerDetach (default, fastest measured and touches
	// nothing else), DeleteVolumeAttachment or OutOfServiceTaint.
	// +kubebuilder:default=ControllerDetach
	// +optional
	Strategy ReleaseStrategy `json:"strategy,omitempty"`

	// RequireReachableReplicas releases a volume only when every replica of
	// it lives on a node longhorn-manager reaches: none on the failed node,
	// none on another node that is down. Longhorn acknowledges a write once
	// one replica has it, so an engine cut off from its other replicas
	// keeps writing to the ones it still reaches until it is fenced; a new
	// engine started without those replicas loses those writes, fenced or
	// not. Until then no delegate fencer is started either: its own
	// release would do the same. false releases on fencing evidence anyway:
	// only where clients cannot reach s3gw on a node cut off from the
	// storage network.
	// +kubebuilder:default=true
	// +optional
	RequireReachableReplicas *bool `json:"requireReachableReplicas,omitempty"`

	// AcceptStaleReadsWithoutRevisionCounter releases volumes whose Longhorn
	// revision counter is disabled (spec.revisionCounterDisabled, the
	// default for volumes created through CSI without the StorageClass
	// parameter disableRevisionCounter: "false"). Their next engine compares
	// no replicas: it serves every replica not marked failed side by side,
	// so a write in flight at the crash, or a replica the old engine dropped
	// while its node was cut off from the API server, makes s3gw read stale
	// or mixed blocks after the move, fenced or not. false (the default)
	// never releases such a volume: the remediation fails at once so that
	// NodeHealthCheck escalates. true accepts those reads.
	// +kubebuilder:default=false
	// +optional
	AcceptStaleReadsWithoutRevisionCounter bool `json:"acceptStaleReadsWithoutRevisionCounter,omitempty"`

	// LonghornNamespace is where Longhorn's CRs live.
	// +kubebuilder:default=longhorn-system
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be a namespace name: at most 63 lowercase letters, digits and '-', beginning and ending with a letter or digit"
	// +optional
	LonghornNamespace string `json:"longhornNamespace,omitempty"`
}

// Phase is a summary of where a remediation is; decisions never read it.
// +kubebuilder:validation:Enum=Pending;WaitingForNodeFailure;WaitingForFencing;WaitingForStorage;Evicting;Releasing;WaitingForReplacement;Succeeded;Failed;Stopped;Excluded
type Phase string

// Phases, in the order a remediation usually goes through them.
const (
	PhasePending               Phase = "Pending"
	PhaseWaitingForNodeFailure Phase = "WaitingForNodeFailure"
	PhaseWaitingForFencing     Phase = "WaitingForFencing"
	PhaseWaitingForStorage     Phase = "WaitingForStorage"
	PhaseEvicting              Phase = "Evicting"
	PhaseReleasing             Phase = "Releasing"
	PhaseWaitingForReplacement Phase = "WaitingForReplacement"
	PhaseSucceeded             Phase = "Succeeded"
	PhaseFailed                Phase = "Failed"
	PhaseStopped               Phase = "Stopped"
	// PhaseExcluded: the node carries remediation.medik8s.io/exclude-from-remediation=true;
	// no step is taken until the label goes.
	PhaseExcluded Phase = "Excluded"
)

// TargetState is where one s3gw pod is in its move.
// +kubebuilder:validation:Enum=Found;Evicted;Released;Replaced
type TargetState string

// Target states.
const (
	TargetFound    TargetState = "Found"
	TargetEvicted  TargetState = "Evicted"
	TargetReleased TargetState = "Released"
	TargetReplaced TargetState = "Replaced"
)

// VolumeState is whether a target's volume is released by this remediation.
// +kubebuilder:validation:Enum=Attached;Released;Skipped
type VolumeState string

// Volume states.
const (
	VolumeAttached VolumeState = "Attached"
	VolumeReleased VolumeState = "Released"
	VolumeSkipped  VolumeState = "Skipped"
)

// TargetPod is one s3gw pod found on the failed node. It is recorded before
// anything is deleted, so the remediation still knows what it moves after the
// pod is gone from the API. A target without name and UID is a volume still
// attached to the node whose pod was already deleted (e.g. by a fencing
// remediator) while its replacement waits elsewhere.
type TargetPod struct {
	// Namespace of the pod.
	Namespace string `json:"namespace"`
	// Name of the pod; empty when it was gone before it was found.
	// +optional
	Name string `json:"name,omitempty"`
	// UID of the pod; the force delete is preconditioned on it.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// Owner is the workload that will create the replacement.
	// +optional
	Owner *WorkloadOwner `json:"owner,omitempty"`
	// State of this pod's move.
	// +optional
	State TargetState `json:"state,omitempty"`
	// Volumes are the pod's persistent volumes.
	// +listType=atomic
	// +optional
	Volumes []TargetVolume `json:"volumes,omitempty"`
	// Replacement is the pod that took over, once Ready.
	// +optional
	Replacement *ReplacementPod `json:"replacement,omitempty"`
}

// WorkloadOwner is the controller of a target pod: a StatefulSet, or a
// Deployment through its ReplicaSet.
type WorkloadOwner struct {
	// Kind is Deployment, StatefulSet, or ReplicaSet for a bare ReplicaSet.
	Kind string `json:"kind"`
	// Name of the owner.
	Name string `json:"name"`
	// ReplicaSet the pod belonged to, for Deployments.
	// +optional
	ReplicaSet string `json:"replicaSet,omitempty"`
}

// TargetVolume is one PVC of a target pod and whether it is released here.
type TargetVolume struct {
	// ClaimName is the PVC.
	ClaimName string `json:"claimName"`
	// PersistentVolume bound to the claim, if any.
	// +optional
	PersistentVolume string `json:"persistentVolume,omitempty"`
	// LonghornVolume is the CSI volume handle, also the Longhorn volume and
	// Longhorn VolumeAttachment name.
	// +optional
	LonghornVolume string `json:"longhornVolume,omitempty"`
	// State: Attached (to be released), Released, or Skipped (not a
	// ReadWriteOnce Longhorn volume; left alone).
	State VolumeState `json:"state"`
	// Reason explains a Skipped volume.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ReplacementPod is the pod that now serves s3gw.
type ReplacementPod struct {
	// Name of the pod.
	Name string `json:"name"`
	// NodeName it runs on.
	NodeName string `json:"nodeName"`
}

// FailureEpisode identifies the node failure a remediation works on: the
// node's Ready condition as the first pass of that failure saw it. When the
// node recovers and fails again while NodeHealthCheck keeps the CR (e.g.
// with healthyDelay), the condition differs and the remediation starts over.
type FailureEpisode struct {
	// ReadyStatus is the Ready condition's status: False or Unknown, or
	// empty when the node reported none.
	// +optional
	ReadyStatus string `json:"readyStatus,omitempty"`
	// NotReadySince is the Ready condition's lastTransitionTime.
	// +optional
	NotReadySince *metav1.Time `json:"notReadySince,omitempty"`
	// KubeletPostedAt is the Ready condition's lastHeartbeatTime, the
	// kubelet's last status post.
	// +optional
	KubeletPostedAt *metav1.Time `json:"kubeletPostedAt,omitempty"`
	// RecoveredAt is when a pass of this remediation first saw the node
	// Ready again, on the controller's own clock, during or before this
	// failure. A delegate fence the controller saw before it fenced an
	// earlier incident; until then the node may still be coming back from
	// it, and it is not fenced again.
	// +optional
	RecoveredAt *metav1.MicroTime `json:"recoveredAt,omitempty"`
	// ReadySince is the Ready condition's lastTransitionTime to True that
	// recoveredAt saw: the kubelet's clock, compared only for equality, so
	// one Ready period is recorded once.
	// +optional
	ReadySince *metav1.Time `json:"readySince,omitempty"`
}

// HeartbeatSighting is what the controller saw of the node's heartbeat. The
// kubelet's timestamps are the node's clock and are only compared for
// equality; seenAt is the controller's own clock: when it first read these
// values. The kubelet counts as silent once seenAt is a Lease duration old,
// as kube-controller-manager judges it.
type HeartbeatSighting struct {
	// LeaseRenewTime is the node Lease's renewTime as last read.
	// +optional
	LeaseRenewTime *metav1.MicroTime `json:"leaseRenewTime,omitempty"`
	// KubeletPostedAt is the Ready condition's lastHeartbeatTime as last read.
	// +optional
	KubeletPostedAt *metav1.Time `json:"kubeletPostedAt,omitempty"`
	// SeenAt is when the controller first read these values.
	SeenAt metav1.MicroTime `json:"seenAt"`
	// Witnessed is true when seenAt is a change the controller saw, not its
	// first reading.
	// +optional
	Witnessed bool `json:"witnessed,omitempty"`
	// ReadyStatus and NotReadySince are the Ready condition at seenAt.
	// +optional
	ReadyStatus string `json:"readyStatus,omitempty"`
	// +optional
	NotReadySince *metav1.Time `json:"notReadySince,omitempty"`
	// ChangedUnderCondition is true when the controller had first read the
	// previous values under that same Ready condition: the kubelet changed
	// them after the condition began.
	// +optional
	ChangedUnderCondition bool `json:"changedUnderCondition,omitempty"`
}

// EvidenceSighting is what the controller saw of one piece of timed
// fencing evidence, on its own clock: a fencer's CR for the node, or the
// out-of-service taint.
type EvidenceSighting struct {
	// Name is Kind/name of the CR, or node.kubernetes.io/out-of-service.
	Name string `json:"name"`
	// PendingAt is when the controller last saw it prove nothing yet.
	// +optional
	PendingAt *metav1.MicroTime `json:"pendingAt,omitempty"`
	// ProvenAt is when the controller first saw it prove the node fenced.
	// +optional
	ProvenAt *metav1.MicroTime `json:"provenAt,omitempty"`
	// FailedAt is when the controller first saw the CR report
	// Succeeded=False: its fencer gave up.
	// +optional
	FailedAt *metav1.MicroTime `json:"failedAt,omitempty"`
}

// S3GWRemediationStatus reports progress to NodeHealthCheck (which reads only
// the Processing and Succeeded conditions) and to people.
type S3GWRemediationStatus struct {
	// Phase summarises where the remediation is.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// PhaseTransitionTime is when Phase last changed.
	// +optional
	PhaseTransitionTime *metav1.Time `json:"phaseTransitionTime,omitempty"`

	// NodeName is the failed node this remediation works on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// Conditions: Processing and Succeeded (the medik8s contract), plus
	// Fenced, WorkloadEvicted, AttachmentsReleased and ReplacementReady.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Targets are the s3gw pods found on the node and where each one's
	// move stands.
	// +listType=atomic
	// +optional
	Targets []TargetPod `json:"targets,omitempty"`

	// FencingEvidence lists the evidence that opened the fencing gate.
	// +listType=atomic
	// +optional
	FencingEvidence []string `json:"fencingEvidence,omitempty"`

	// AddedTaints are taints this remediation puts on the node, recorded
	// with the timeAdded it stamps before they are added. A taint on the
	// node is this remediation's only if key, effect and timeAdded match;
	// only such a taint is removed when the CR is deleted.
	// +listType=atomic
	// +optional
	AddedTaints []corev1.Taint `json:"addedTaints,omitempty"`

	// Delegate is the fencing remediation CR this remediation created.
	// +optional
	Delegate *corev1.ObjectReference `json:"delegate,omitempty"`

	// StartTime is when the remediation started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the replacement became Ready.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// LastError is the last error met, empty once a pass succeeds.
	// +optional
	LastError string `json:"lastError,omitempty"`

	// ObservedGeneration is the generation last reconciled without error.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Memory is what the controller remembers between passes, written
	// only by its state machine; everything else in status is computed
	// from it and from what a pass observed. Not for people to edit.
	// +optional
	Memory RemediationMemory `json:"memory,omitzero"`
}

// RemediationMemory is the controller's record of the node failure it works
// on: what the world no longer shows once the controller acted (the pods it
// recorded before deleting them) and what it saw on its own clock (the
// node's last sign of life, when each piece of evidence arose, when the
// gate opened). A restart forgets nothing of it and invents nothing.
type RemediationMemory struct {
	// Episode is the node failure this remediation works on.
	// +optional
	Episode *FailureEpisode `json:"episode,omitempty"`

	// Heartbeat is what the controller saw of the node's heartbeat, on its
	// own clock.
	// +optional
	Heartbeat *HeartbeatSighting `json:"heartbeat,omitempty"`

	// EvidenceSightings are what the controller saw of each fencer's CR for
	// the node and of the out-of-service taint, on its own clock: evidence
	// counts only if it arose after the node's last sign of life.
	// +listType=map
	// +listMapKey=name
	// +optional
	EvidenceSightings []EvidenceSighting `json:"evidenceSightings,omitempty"`

	// Targets are the s3gw pods recorded before anything was deleted, so
	// the remediation still knows what it moves once they are gone.
	// +listType=atomic
	// +optional
	Targets []RecordedTarget `json:"targets,omitempty"`

	// FencedAt is when the controller found the gate open for this failure
	// (the release deadline counts from it); unset while it is closed.
	// +optional
	FencedAt *metav1.Time `json:"fencedAt,omitempty"`

	// ReleasedAt is when the controller found every target's pod gone and
	// its volumes released (the replacement timeout counts from it).
	// +optional
	ReleasedAt *metav1.Time `json:"releasedAt,omitempty"`

	// SucceededAt is when this failure's remediation reported
	// Succeeded=True; a finished move stays finished within its failure.
	// +optional
	SucceededAt *metav1.Time `json:"succeededAt,omitempty"`

	// SuccessReported is true while Succeeded=True is reported, for this
	// failure or an earlier one under the same CR: NodeHealthCheck may
	// have acted on it, so it is never taken back to Unknown.
	// +optional
	SuccessReported bool `json:"successReported,omitempty"`
}

// RecordedTarget is one s3gw pod as recorded before anything was deleted:
// what it is, not where its move stands (status.targets says that). One
// without name and UID is a volume still attached to the node whose pod was
// already gone when the remediation found it.
type RecordedTarget struct {
	// Namespace of the pod.
	Namespace string `json:"namespace"`
	// Name of the pod; empty when it was gone before it was found.
	// +optional
	Name string `json:"name,omitempty"`
	// UID of the pod; the force delete is preconditioned on it.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// Owner is the workload that will create the replacement.
	// +optional
	Owner *WorkloadOwner `json:"owner,omitempty"`
	// Volumes are the pod's persistent volumes.
	// +listType=atomic
	// +optional
	Volumes []RecordedVolume `json:"volumes,omitempty"`
}

// Key identifies the target: its pod's UID, or for a target whose pod was
// already gone, the volume it releases.
func (t RecordedTarget) Key() string {
	if len(t.Volumes) > 0 {
		return TargetKey(t.UID, t.Volumes[0].PersistentVolume)
	}
	return TargetKey(t.UID, "")
}

// TargetKey identifies a target by its pod's UID or, without one, by the
// persistent volume it releases; empty when it has neither.
func TargetKey(uid types.UID, persistentVolume string) string {
	switch {
	case uid != "":
		return string(uid)
	case persistentVolume != "":
		return "pv/" + persistentVolume
	}
	return ""
}

// RecordedVolume is one PVC of a recorded target.
type RecordedVolume struct {
	// ClaimName is the PVC.
	ClaimName string `json:"claimName"`
	// PersistentVolume bound to the claim, if any.
	// +optional
	PersistentVolume string `json:"persistentVolume,omitempty"`
	// LonghornVolume is the CSI volume handle, also the Longhorn volume and
	// Longhorn VolumeAttachment name.
	// +optional
	LonghornVolume string `json:"longhornVolume,omitempty"`
	// SkipReason says why the volume is left alone (not a ReadWriteOnce
	// Longhorn volume); empty for a volume the remediation releases.
	// +optional
	SkipReason string `json:"skipReason,omitempty"`
}

// S3GWRemediation moves the s3gw gateway off one failed node. NodeHealthCheck
// creates it from an S3GWRemediationTemplate and deletes it when the node is
// healthy again or gone.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=s3gwr;s3gwremediation
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.nodeName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Succeeded",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type S3GWRemediation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Spec S3GWRemediationSpec `json:"spec,omitzero"`
	// +optional
	Status S3GWRemediationStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// S3GWRemediationList contains a list of S3GWRemediation.
type S3GWRemediationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []S3GWRemediation `json:"items"`
}

// Timeouts that apply when the spec leaves them unset (the API server
// defaults them; Go callers may not).
const (
	DefaultReplacementTimeout = 5 * time.Minute
	DefaultReleaseTimeout     = 2 * time.Minute
)

// Defaults the API server fills in; the OrDefault methods apply them for
// Go callers that build specs themselves (tests, older objects).
const (
	DefaultLonghornNamespace = "longhorn-system"
	DefaultConditionType     = "Succeeded"
)

// DefaultWorkloadSelector matches the s3gw Helm chart's gateway pods, not
// its UI or COSI pods.
func DefaultWorkloadSelector() *LabelSelector {
	return &LabelSelector{MatchLabels: map[string]LabelValue{
		"app.kubernetes.io/name":      "s3gw",
		"app.kubernetes.io/component": "gateway",
	}}
}

// WorkloadSelectorOrDefault is spec.workloadSelector, or its default.
func (s S3GWRemediationSpec) WorkloadSelectorOrDefault() *metav1.LabelSelector {
	if s.WorkloadSelector != nil {
		return s.WorkloadSelector.Meta()
	}
	return DefaultWorkloadSelector().Meta()
}

// RequireReachableReplicasOrDefault is release.requireReachableReplicas;
// unset means the default, true.
func (r ReleaseSpec) RequireReachableReplicasOrDefault() bool {
	return r.RequireReachableReplicas == nil || *r.RequireReachableReplicas
}

// LonghornNamespaceOrDefault is release.longhornNamespace, or its default.
func (r ReleaseSpec) LonghornNamespaceOrDefault() string {
	if r.LonghornNamespace != "" {
		return r.LonghornNamespace
	}
	return DefaultLonghornNamespace
}

// ConditionTypeOrDefault is the remediator's proving condition, or Succeeded.
func (r RemediatorEvidence) ConditionTypeOrDefault() string {
	return conditionTypeOrDefault(r.ConditionType)
}

// ConditionTypeOrDefault is the delegate's proving condition, or Succeeded.
func (d DelegateFencing) ConditionTypeOrDefault() string {
	return conditionTypeOrDefault(d.ConditionType)
}

func conditionTypeOrDefault(t string) string {
	if t == "" {
		return DefaultConditionType
	}
	return t
}

// ReleaseTimeoutOrDefault is spec.releaseTimeout, or its default.
func (s S3GWRemediationSpec) ReleaseTimeoutOrDefault() time.Duration {
	if s.ReleaseTimeout != nil {
		return s.ReleaseTimeout.Duration
	}
	return DefaultReleaseTimeout
}

// ReplacementTimeoutOrDefault is spec.replacementTimeout, or its default.
func (s S3GWRemediationSpec) ReplacementTimeoutOrDefault() time.Duration {
	if s.ReplacementTimeout != nil {
		return s.ReplacementTimeout.Duration
	}
	return DefaultReplacementTimeout
}
