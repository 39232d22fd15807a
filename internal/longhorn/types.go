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

// Package longhorn reads Longhorn's longhorn.io/v1beta2 custom resources for
// the remediation controller. Longhorn's Go module is not a dependency: these
// are small typed views holding only the fields the controller (and the test
// simulator) use; unknown fields are ignored on read.
// +kubebuilder:object:generate=true
// +groupName=longhorn.io
package longhorn

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is Longhorn's API version since v1.3.
	GroupVersion = schema.GroupVersion{Group: "longhorn.io", Version: "v1beta2"}
	// SchemeBuilder registers the views.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the views to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Well-known Longhorn names.
const (
	// CSIDriverName is Longhorn's CSI driver.
	CSIDriverName = "driver.longhorn.io"
	// VolumeLabel is set by Longhorn on replicas and engines of a volume.
	VolumeLabel = "longhornvolume"
	// InstanceManagerNodeLabel names the node of an instance manager:
	// longhorn-manager sets it when it creates one
	// (types/types.go GetInstanceManagerLabels) and lists a node's by it
	// (datastore/longhorn.go ListInstanceManagersByNodeRO).
	InstanceManagerNodeLabel = "longhorn.io/node"
	// NodeConditionReady is the Longhorn Node condition that reports down nodes.
	NodeConditionReady = "Ready"
	// NodeReasonKubernetesNodeNotReady means Kubernetes reports the node not Ready.
	NodeReasonKubernetesNodeNotReady = "KubernetesNodeNotReady"
	// NodeReasonKubernetesNodeGone means the Kubernetes Node object is gone.
	NodeReasonKubernetesNodeGone = "KubernetesNodeGone"
	// TicketTypeCSIAttacher is the ticket type the CSI driver creates.
	TicketTypeCSIAttacher = "csi-attacher"
	// InstanceManagerRunning is the one instance manager state whose
	// process list comes from the process itself.
	InstanceManagerRunning = "running"
	// InstanceManagerUnknown is an instance manager on a node Longhorn
	// counts down: its list is the last one recorded.
	InstanceManagerUnknown = "unknown"
)

// Condition is Longhorn's condition shape.
type Condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
	LastProbeTime      string      `json:"lastProbeTime,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitzero"`
}

// Volume is a view of volumes.longhorn.io.
// +kubebuilder:object:root=true
type Volume struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VolumeSpec   `json:"spec,omitzero"`
	Status            VolumeStatus `json:"status,omitzero"`
}

// VolumeSpec holds the desired attachment node and replica count, and
// whether the engine compares replicas' revision counters when it starts.
type VolumeSpec struct {
	NodeID           string `json:"nodeID,omitempty"`
	NumberOfReplicas int    `json:"numberOfReplicas,omitempty"`
	AccessMode       string `json:"accessMode,omitempty"`
	// RevisionCounterDisabled: the engine serves every replica that
	// answers without comparing them (Longhorn's CSI default). Longhorn
	// always writes it.
	RevisionCounterDisabled bool `json:"revisionCounterDisabled"`
}

// VolumeStatus holds where the volume is attached and its health.
type VolumeStatus struct {
	State         string `json:"state,omitempty"`
	Robustness    string `json:"robustness,omitempty"`
	CurrentNodeID string `json:"currentNodeID,omitempty"`
	OwnerID       string `json:"ownerID,omitempty"`
}

// +kubebuilder:object:root=true

// VolumeList is a list of Volumes.
type VolumeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Volume `json:"items"`
}

// Replica is a view of replicas.longhorn.io.
// +kubebuilder:object:root=true
type Replica struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ReplicaSpec   `json:"spec,omitzero"`
	Status            ReplicaStatus `json:"status,omitzero"`
}

// ReplicaSpec says where the replica lives and whether it is healthy.
type ReplicaSpec struct {
	NodeID      string `json:"nodeID,omitempty"`
	VolumeName  string `json:"volumeName,omitempty"`
	FailedAt    string `json:"failedAt,omitempty"`
	HealthyAt   string `json:"healthyAt,omitempty"`
	DesireState string `json:"desireState,omitempty"`
	// RevisionCounterDisabled is the Volume's setting when Longhorn
	// created the replica (longhorn-manager controller/utils.go
	// newReplicaCR); editing the Volume later does not change it.
	RevisionCounterDisabled bool `json:"revisionCounterDisabled,omitempty"`
}

// ReplicaStatus holds the replica process state.
type ReplicaStatus struct {
	CurrentState string `json:"currentState,omitempty"`
}

// +kubebuilder:object:root=true

// ReplicaList is a list of Replicas.
type ReplicaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Replica `json:"items"`
}

// Engine is a view of engines.longhorn.io.
// +kubebuilder:object:root=true
type Engine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              EngineSpec   `json:"spec,omitzero"`
	Status            EngineStatus `json:"status,omitzero"`
}

// EngineSpec says where the engine should run.
type EngineSpec struct {
	NodeID      string `json:"nodeID,omitempty"`
	VolumeName  string `json:"volumeName,omitempty"`
	DesireState string `json:"desireState,omitempty"`
}

// EngineStatus holds the engine process state and replica modes.
type EngineStatus struct {
	CurrentState   string            `json:"currentState,omitempty"`
	ReplicaModeMap map[string]string `json:"replicaModeMap,omitempty"`
}

// +kubebuilder:object:root=true

// EngineList is a list of Engines.
type EngineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Engine `json:"items"`
}

// Node is a view of nodes.longhorn.io, named after the Kubernetes node.
// +kubebuilder:object:root=true
type Node struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            NodeStatus `json:"status,omitzero"`
}

// NodeStatus holds Longhorn's node conditions.
type NodeStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// NodeList is a list of Nodes.
type NodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Node `json:"items"`
}

// VolumeAttachment is a view of volumeattachments.longhorn.io, named after
// the volume, holding one ticket per requester.
// +kubebuilder:object:root=true
type VolumeAttachment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VolumeAttachmentSpec   `json:"spec,omitzero"`
	Status            VolumeAttachmentStatus `json:"status,omitzero"`
}

// VolumeAttachmentSpec holds the attachment tickets by ID.
type VolumeAttachmentSpec struct {
	Volume            string                       `json:"volume,omitempty"`
	AttachmentTickets map[string]*AttachmentTicket `json:"attachmentTickets,omitempty"`
}

// AttachmentTicket is one requester's wish to attach the volume to a node.
// For the CSI driver the ID equals the storage.k8s.io VolumeAttachment name.
type AttachmentTicket struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	NodeID     string            `json:"nodeID"`
	Parameters map[string]string `json:"parameters,omitempty"`
	Generation int64             `json:"generation,omitempty"`
}

// VolumeAttachmentStatus holds whether each ticket is satisfied.
type VolumeAttachmentStatus struct {
	AttachmentTicketStatuses map[string]*AttachmentTicketStatus `json:"attachmentTicketStatuses,omitempty"`
}

// AttachmentTicketStatus says whether a ticket is satisfied.
type AttachmentTicketStatus struct {
	ID         string      `json:"id"`
	Satisfied  bool        `json:"satisfied"`
	Conditions []Condition `json:"conditions,omitempty"`
	Generation int64       `json:"generation,omitempty"`
}

// +kubebuilder:object:root=true

// VolumeAttachmentList is a list of VolumeAttachments.
type VolumeAttachmentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VolumeAttachment `json:"items"`
}

// InstanceManager is a view of instancemanagers.longhorn.io: the process on
// a node that runs its engine and replica processes. Only that node's
// longhorn-manager refreshes its list of processes, from the process itself
// (controller/instance_manager_controller.go InstanceManagerMonitor); while
// that manager cannot reach the API server the CR goes stale, and once
// Longhorn counts the node down another manager sets it unknown
// (syncStatusWithNode).
// +kubebuilder:object:root=true
type InstanceManager struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              InstanceManagerSpec   `json:"spec,omitzero"`
	Status            InstanceManagerStatus `json:"status,omitzero"`
}

// InstanceManagerSpec names the node it runs on.
type InstanceManagerSpec struct {
	NodeID string `json:"nodeID,omitempty"`
}

// InstanceManagerStatus is its state and its replica processes by replica
// name (v1beta2 instanceReplicas), blanked in every state but running and
// unknown (syncInstanceStatus).
type InstanceManagerStatus struct {
	CurrentState     string                     `json:"currentState,omitempty"`
	InstanceReplicas map[string]InstanceProcess `json:"instanceReplicas,omitempty"`
}

// InstanceProcess is one process an instance manager runs.
type InstanceProcess struct {
	Status InstanceProcessStatus `json:"status,omitzero"`
}

// InstanceProcessStatus is the process's state: starting, running,
// stopping, stopped, error (and suspended for v2 engines).
type InstanceProcessStatus struct {
	State string `json:"state,omitempty"`
}

// +kubebuilder:object:root=true

// InstanceManagerList is a list of InstanceManagers.
type InstanceManagerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InstanceManager `json:"items"`
}

// Setting is a view of settings.longhorn.io: one of Longhorn's settings,
// named after it, in Longhorn's namespace, with its value at the top level
// (no spec). longhorn-manager creates every setting with its default when it
// starts (datastore/longhorn.go UpdateCustomizedSettings,
// createNonExistingSettingCRsWithDefaultSetting).
// +kubebuilder:object:root=true
type Setting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Value is the setting's value as a string: "true" or "false" for a
	// boolean setting such as auto-salvage.
	Value string `json:"value"`
}

// +kubebuilder:object:root=true

// SettingList is a list of Settings.
type SettingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Setting `json:"items"`
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&Volume{}, &VolumeList{},
		&Replica{}, &ReplicaList{},
		&Engine{}, &EngineList{},
		&Node{}, &NodeList{},
		&VolumeAttachment{}, &VolumeAttachmentList{},
		&InstanceManager{}, &InstanceManagerList{},
		&Setting{}, &SettingList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
