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
	"github.com/medik8s/common/pkg/conditions"
)

// Condition types on S3GWRemediation. NodeHealthCheck reads only Succeeded
// (and ignores Processing); the others tell people which step holds.
const (
	// ConditionProcessing is True while the remediation works on the node.
	ConditionProcessing = conditions.ProcessingType
	// ConditionSucceeded is True once the replacement is Ready elsewhere,
	// False when the remediation cannot help, Unknown while it works.
	ConditionSucceeded = conditions.SucceededType
	// ConditionFenced is True once the fencing gate is open.
	ConditionFenced = "Fenced"
	// ConditionWorkloadEvicted is True once no target pod is left in the API.
	ConditionWorkloadEvicted = "WorkloadEvicted"
	// ConditionAttachmentsReleased is True once no attachment of a target
	// volume is left on the failed node, in Kubernetes or in Longhorn.
	ConditionAttachmentsReleased = "AttachmentsReleased"
	// ConditionReplacementReady is True once every target has a Ready
	// replacement on another node.
	ConditionReplacementReady = "ReplacementReady"
	// ConditionWorkloadSelectorValid is False when the workload selector
	// does not parse, or matches pods on the node the controller never
	// touches (DaemonSet, mirror and Longhorn pods), named in the message.
	ConditionWorkloadSelectorValid = "WorkloadSelectorValid"
)

// Condition reasons. docs/troubleshooting.md explains each one.
const (
	ReasonRemediationStarted      = "RemediationStarted"
	ReasonRemediationFinished     = "RemediationFinishedSuccessfully"
	ReasonRemediationStoppedByNHC = "RemediationStoppedByNHC"
	ReasonNodeNotFound            = "NodeNotFound"
	ReasonNodeReady               = "NodeReady"
	ReasonNodeFailedAgain         = "NodeFailedAgain"
	ReasonExcludedFromRemediation = "ExcludedFromRemediation"
	ReasonNoWorkloadOnNode        = "NoWorkloadOnNode"
	ReasonWaitingForFencing       = "WaitingForFencing"
	ReasonFencingEvidence         = "FencingEvidenceFound"
	ReasonFencingDisabled         = "FencingDisabled"
	ReasonInvalidDelegate         = "InvalidDelegate"
	ReasonDelegateFailed          = "DelegateFailed"
	// ReasonDelegateNotStarted: the delegate's fencer CR shows no sign that
	// its fencer picked it up (no condition, no finalizer) a minute after it
	// was created: the fencer is not running, or may not read what it needs.
	ReasonDelegateNotStarted      = "DelegateNotStarted"
	ReasonConflictingRemediations = "ConflictingRemediations"
	ReasonNoHealthyReplica        = "NoHealthyReplica"
	ReasonReplicasUnreachable     = "ReplicasUnreachable"
	// ReasonRevisionCounterDisabled: a volume to release has Longhorn's
	// revision counter disabled; its next engine could serve stale replicas.
	ReasonRevisionCounterDisabled = "RevisionCounterDisabled"
	ReasonLonghornUnavailable     = "LonghornUnavailable"
	ReasonEvicting                = "Evicting"
	ReasonEvicted                 = "Evicted"
	ReasonReleasing               = "Releasing"
	ReasonReleased                = "Released"
	ReasonKubeletAlive            = "KubeletAlive"
	// ReasonReplicaStopUnconfirmed: Longhorn's ticket for the failed node is
	// removed, and the Kubernetes release waits until each replica's own
	// instance manager shows its process gone; on Fenced, the delegate is
	// not created meanwhile.
	ReasonReplicaStopUnconfirmed = "ReplicaStopUnconfirmed"
	// ReasonFencerAtWork: the gate rests on storage isolation alone and a
	// fencer still works on the node; Longhorn's ticket stays until it is
	// done.
	ReasonFencerAtWork            = "FencerAtWork"
	ReasonPodFinalizers           = "PodFinalizers"
	ReasonWaitingForReplacement   = "WaitingForReplacement"
	ReasonReplacementReady        = "ReplacementReady"
	ReasonReplacementNotReady     = "ReplacementNotReady"
	ReasonEvictionTimedOut        = "EvictionTimedOut"
	ReasonReleaseTimedOut         = "ReleaseTimedOut"
	ReasonInvalidWorkloadSelector = "InvalidWorkloadSelector"
	ReasonSelectsProtectedPods    = "SelectsProtectedPods"
	ReasonWorkloadSelectorValid   = "WorkloadSelectorValid"
)
