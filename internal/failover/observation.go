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

package failover

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Observation is what one step read of the world, reduced to the facts the
// decision needs. It holds nothing the controller remembers: Step completes
// it with the remediation's memory (State).
type Observation struct {
	// Now is the step's time.
	Now time.Time
	// Spec is the remediation's spec.
	Spec s3gwv1alpha1.S3GWRemediationSpec
	// TimedOut is true once NHC added remediation.medik8s.io/nhc-timed-out.
	TimedOut bool
	// Node is the failed node; nil when it does not exist.
	Node *Node
	// Targets are the s3gw pods the memory records, then those found on the
	// node now; empty when the step did not look (timed out, excluded).
	Targets []Target
	// RefusedPods are pods on the node the selector matches that the
	// controller never touches (DaemonSet, mirror or Longhorn pods), named
	// with why.
	RefusedPods []string
	// SelectorError says why the workload selector does not parse.
	SelectorError string
	// Others are the other S3GWRemediations of the node that select some of
	// the same targets, whatever their rules; read only for a node that is
	// not Ready.
	Others []OtherRemediation
	// Evidence is what the evidence sources observed.
	Evidence Evidence
	// LonghornAvailable is false when Longhorn's CRDs are not served.
	LonghornAvailable bool
}

// Node is the failed node's state.
type Node struct {
	Name string
	// Ready is true when the Ready condition is True.
	Ready bool
	// Heartbeat is the node's Ready condition and Lease.
	Heartbeat Heartbeat
	// OutOfServiceTaint is node.kubernetes.io/out-of-service:NoExecute when
	// the node carries it, whoever added it; nil otherwise.
	OutOfServiceTaint *Taint
	// StaleTaintOwner is true when the node's owner annotation names no
	// out-of-service taint on it (TaintOwnership): a fencer removed our
	// taint by key, or the annotation does not parse.
	StaleTaintOwner bool
	// Excluded is true while the node is labelled
	// remediation.medik8s.io/exclude-from-remediation=true, read on every
	// step (ExcludedFromRemediation).
	Excluded bool
}

// ExcludedFromRemediation reports whether the node's labels exclude it from
// remediation. Only the value "true" does, as NHC
// (nodehealthcheck_controller.go, isNodeRemediationExcluded) and SNR
// (selfnoderemediation_controller.go, ReconcileManager) read it; NHC only
// warns about an empty value.
func ExcludedFromRemediation(labels map[string]string) bool {
	return labels[ExcludeFromRemediationLabel] == "true"
}

// ExcludeFromRemediationLabel is medik8s/common's labels.ExcludeFromRemediation.
const ExcludeFromRemediationLabel = "remediation.medik8s.io/exclude-from-remediation"

// Taint is the out-of-service taint seen on the node.
type Taint struct {
	// TimeAdded is the taint's timeAdded; nil when it has none.
	TimeAdded *time.Time
	// Owner is the S3GWRemediation that added it, as the node's owner
	// annotation names it and only while that annotation names this very
	// taint (TaintOwnership); empty when none did (an admin, a fencer).
	Owner types.UID
	// Ours is true when Owner is this remediation.
	Ours bool
}

// Foreign is true for a taint no S3GWRemediation added. Only a foreign
// taint is evidence: our own would keep the gate open after the evidence
// that opened it went away.
func (t *Taint) Foreign() bool { return t != nil && t.Owner == "" }

// RemediatorCR is another remediator's CR for the failed node.
type RemediatorCR struct {
	Kind, Name string
	// Fenced is true when its proving condition is True.
	Fenced bool
	// CreatedAt is the CR's creationTimestamp.
	CreatedAt time.Time
	// Failure is, once the CR reports Succeeded=False, its reason and
	// message: the remediator gave up for good (FAR and SNR never act on a
	// CR again once they set it). Empty while it has not.
	Failure string
	// Succeeded is true when its Succeeded condition is True: the fencer
	// finished its whole remediation, as NHC reads it.
	Succeeded bool
	// Started is true once the fencer picked the CR up: it carries a
	// condition or a finalizer.
	Started bool
}

// MayTimeOut reports whether NHC's timed-out annotation may be copied onto
// the fencing CR: never once it reports Succeeded=True, as NHC itself never
// times out a succeeded CR (node-healthcheck-operator,
// internal/controller/nodehealthcheck_controller.go, remediate: both the
// escalation timeout and the overdue lease skip addTimeOutAnnotation when
// remediationSucceeded). FAR would turn its conditions False for a fence
// that is done.
func (cr RemediatorCR) MayTimeOut() bool { return !cr.Succeeded }

// Target is one s3gw pod on the failed node.
type Target struct {
	Namespace, Name string
	UID             types.UID
	// Owner is the workload that creates the replacement.
	Owner *s3gwv1alpha1.WorkloadOwner
	// Recorded is true for a target the memory records, so it is
	// remembered after the pod is gone.
	Recorded bool
	// PodPresent is true while a pod with this UID exists in the API.
	PodPresent bool
	// ForceDeleted is true when the present pod was already deleted with
	// grace period 0 (kept only by finalizers); it is not deleted again.
	ForceDeleted bool
	// Finalizers are the present pod's finalizers.
	Finalizers []string
	Volumes    []Volume
	// Replacement is a Ready pod of the same workload on another node.
	Replacement *Replacement
}

// State is where the target's move is, for status: its pod still in the
// API, then its volumes released, then a replacement Ready elsewhere.
func (t Target) State() s3gwv1alpha1.TargetState {
	switch {
	case t.PodPresent:
		return s3gwv1alpha1.TargetFound
	case !AllReleased([]Target{t}):
		return s3gwv1alpha1.TargetEvicted
	case t.Replacement == nil:
		return s3gwv1alpha1.TargetReleased
	default:
		return s3gwv1alpha1.TargetReplaced
	}
}

// Key identifies the target as the memory records it
// (RecordedTarget.Key).
func (t Target) Key() string {
	if len(t.Volumes) > 0 {
		return s3gwv1alpha1.TargetKey(t.UID, t.Volumes[0].PersistentVolume)
	}
	return s3gwv1alpha1.TargetKey(t.UID, "")
}

// DisplayName names the target in messages: its pod, or for a target whose
// pod was already gone, its first claim.
func (t Target) DisplayName() string {
	if t.Name == "" && len(t.Volumes) > 0 {
		return t.Namespace + "/" + t.Volumes[0].Claim + " (pod already deleted)"
	}
	return t.Namespace + "/" + t.Name
}

// Replacement names the pod that took over.
type Replacement struct {
	Name, NodeName string
}

// Volume is one persistent volume of a target.
type Volume struct {
	Claim, PersistentVolume, LonghornVolume string
	// SkipReason is set when the volume is not a ReadWriteOnce Longhorn
	// volume; such volumes are reported and left alone.
	SkipReason string
	// Replicas are the volume's Longhorn replicas.
	Replicas []Replica
	// Attachments are the storage.k8s.io VolumeAttachments of (this PV,
	// the failed node).
	Attachments []Attachment
	// InUseOnNode is true while the node's status.volumesInUse lists it.
	InUseOnNode bool
	// Tickets are the tickets Longhorn's VolumeAttachment has for the
	// failed node.
	Tickets []Ticket
	// LonghornVolumeMissing is true when no Longhorn Volume of this name
	// exists in the configured Longhorn namespace.
	LonghornVolumeMissing bool
	// RevisionCounterDisabled is true when Longhorn's Volume (or one of
	// its replicas) has spec.revisionCounterDisabled: its next engine
	// compares no replicas (VolumeRules).
	RevisionCounterDisabled bool
}

// Replica is one Longhorn replica of a volume and what the API shows of the
// node it lives on.
type Replica struct {
	Name, Node string
	// Healthy is true when the replica is not failed and has been healthy
	// (spec.failedAt empty, spec.healthyAt set).
	Healthy bool
	// Host is what the API shows of Node; Host.Reach says whether
	// longhorn-manager can stop the replica's process there.
	Host ReplicaNode
}

// HealthyReplicaElsewhere reports whether a healthy replica lives on another
// node longhorn-manager reaches at now, so a new engine can start from it.
func (v Volume) HealthyReplicaElsewhere(failedNode string, now time.Time) bool {
	for _, r := range v.Replicas {
		if reachable, _ := r.Host.Reach(now); r.Node != failedNode && r.Node != "" && r.Healthy && reachable {
			return true
		}
	}
	return false
}

// Releasable is true for the volumes this controller releases.
func (v Volume) Releasable() bool { return v.SkipReason == "" }

// State is the volume's state for status: skipped, or attached to the
// failed node until nothing attaches it there.
func (v Volume) State() s3gwv1alpha1.VolumeState {
	switch {
	case !v.Releasable():
		return s3gwv1alpha1.VolumeSkipped
	case v.Released():
		return s3gwv1alpha1.VolumeReleased
	default:
		return s3gwv1alpha1.VolumeAttached
	}
}

// Released is true once nothing attaches the volume to the failed node.
func (v Volume) Released() bool { return len(v.Attachments) == 0 && len(v.Tickets) == 0 }

// ToRelease is true for a volume this controller releases that is still
// attached to the failed node.
func (v Volume) ToRelease() bool { return v.Releasable() && !v.Released() }

// Attachment is a storage.k8s.io VolumeAttachment on the failed node.
type Attachment struct {
	Name string
	UID  types.UID
	// Deleting is true once it has a deletionTimestamp; Finalizers keep it.
	Deleting   bool
	Finalizers []string
}

// Ticket is a Longhorn attachment ticket for the failed node.
type Ticket struct {
	ID, Type string
}

// OtherRemediation is another S3GWRemediation of the same node (a second
// template, or a second NodeHealthCheck) that selects some of this
// remediation's targets.
type OtherRemediation struct {
	// Name is its namespace/name.
	Name string
	// Spec is its spec: the rules it would move the shared pods by.
	Spec s3gwv1alpha1.S3GWRemediationSpec
	// Shared names this remediation's targets it selects too
	// (namespace/name), in target order.
	Shared []string
}

// Evidence is what the evidence sources observed, beyond the node itself
// (its out-of-service taint is Node.OutOfServiceTaint).
type Evidence struct {
	// Remediators are CRs of the kinds listed in spec.fencing.remediators
	// found for the node.
	Remediators []RemediatorCR
	// InvalidRemediators says, by kind, why a listed remediator kind cannot
	// prove anything (its apiVersion does not parse, it is not served).
	InvalidRemediators map[string]string
	// Delegate is the fencing CR this remediation created, nil if none.
	Delegate *RemediatorCR
	// DelegateError explains why the delegate cannot be used, if it cannot.
	DelegateError string
	// DelegateRef references Delegate, for status.
	DelegateRef *corev1.ObjectReference
	// OtherFencers are, while the delegate does not exist, the CRs of its
	// kind for the node that this remediation did not create.
	OtherFencers []RemediatorCR
	// LonghornNode is the failed node's Longhorn Node: storage isolation
	// needs it down (LonghornNode.Down).
	LonghornNode LonghornNode
}
