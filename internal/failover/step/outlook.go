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

package step

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// Outlook is what a remediation would decide if a node failed now.
type Outlook struct {
	// FailsOver is true when the remediation would evict the pods and
	// release their volumes.
	FailsOver bool
	// Evidence names the evidence sources the gate would accept.
	Evidence []string
	// Reason says, when it would not fail over, which step would block it
	// (a condition reason); Message says what blocks it.
	Reason, Message string
}

// IfNodeFailed answers, ahead of any failure, whether a remediation would
// move the targets off o.Node if that node failed now. It runs Decide
// itself on the failure it imagines, so the answer follows the volume
// rules', the gate's and the storage check's own rules:
//
//   - the node is lost: Ready=Unknown, its kubelet silent since a minute;
//   - each evidence source shows what its descriptor imagines
//     (Source.Imagine): Longhorn reports the node down, each listed
//     remediator and the delegate report success for this failure unless
//     o.Evidence says its kind (InvalidRemediators) or template
//     (DelegateError) cannot be used, and no out-of-service taint counts:
//     only an admin adds one, by hand;
//   - the targets' pods are on the node, their volumes attached to it; the
//     replicas are where o shows them, and the node's own become unreachable;
//     the release's first step has removed Longhorn's ticket, and each
//     running instance manager elsewhere no longer lists its replica.
//
// o holds the node's name, the targets with their volumes and replicas (as
// the remediation would observe them), the spec, Longhorn's availability,
// the unusable remediators and delegate, and the time. A target with a
// volume that is not a Longhorn RWO volume does not fail over: the
// remediation would leave that volume attached to the failed node.
func IfNodeFailed(o failover.Observation) Outlook {
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if !v.Releasable() {
				return Outlook{Reason: s3gwv1alpha1.ReasonNotLonghornRWO,
					Message: fmt.Sprintf("volume %s of %s is %s; it would stay attached to the failed node", v.Claim, t.DisplayName(), v.SkipReason)}
			}
		}
	}
	failure := imagineFailure(o)
	d := Decide(failure)
	conds := Conditions(failure, d)
	switch d.Phase {
	case s3gwv1alpha1.PhaseEvicting:
		if evicts(d) < len(failure.Targets) {
			// A pod it would not force-delete (finalizers on storage
			// isolation alone) blocks the move.
			return outlookOf(d, conds, s3gwv1alpha1.ConditionWorkloadEvicted)
		}
		return Outlook{FailsOver: true, Evidence: d.Gate.Evidence}
	case s3gwv1alpha1.PhaseWaitingForFencing:
		if d.Gate.Open {
			return Outlook{Reason: s3gwv1alpha1.ReasonNeedsProofOfShutdown, Message: outlookOf(d, conds, s3gwv1alpha1.ConditionFenced).Message}
		}
		return Outlook{Reason: s3gwv1alpha1.ReasonNoFencingEvidence, Message: missingEvidence(o, d.Gate)}
	case s3gwv1alpha1.PhaseWaitingForStorage:
		return outlookOf(d, conds, s3gwv1alpha1.ConditionProcessing)
	default:
		return outlookOf(d, conds, s3gwv1alpha1.ConditionSucceeded)
	}
}

// imagineFailure is o as the first steps of a remediation would see it
// right after the node failed now.
func imagineFailure(o failover.Observation) failover.State {
	now := o.Now
	silentSince := now.Add(-time.Minute)
	node := o.Node.Name
	f := failover.State{Observation: failover.Observation{
		Now:  now,
		Spec: o.Spec,
		Node: &failover.Node{Name: node, Heartbeat: failover.Heartbeat{Ready: failover.ReadyUnknown, ReadySince: silentSince,
			KubeletPosted: silentSince, LeaseRenewed: silentSince,
			Seen: failover.HeartbeatSighting{KubeletPosted: silentSince, LeaseRenewed: silentSince, At: silentSince}}},
		LonghornAvailable: o.LonghornAvailable,
	}}
	for _, source := range evidence.Sources {
		source.Imagine(failover.State{Observation: o}, &f)
	}

	for _, t := range o.Targets {
		t.Recorded, t.PodPresent, t.ForceDeleted, t.Replacement = true, true, false, nil
		volumes := make([]failover.Volume, 0, len(t.Volumes))
		for _, v := range t.Volumes {
			v.Attachments = []failover.Attachment{{Name: v.PersistentVolume + " on " + node}}
			v.InUseOnNode, v.Tickets = true, nil
			replicas := make([]failover.Replica, 0, len(v.Replicas))
			for _, r := range v.Replicas {
				if r.Node == node {
					r.Host = failover.ReplicaNode{Longhorn: failover.LonghornDown, Heartbeat: f.Node.Heartbeat}
				} else {
					r.Host.InstanceManagers = stoppedOn(r)
				}
				replicas = append(replicas, r)
			}
			v.Replicas = replicas
			volumes = append(volumes, v)
		}
		t.Volumes = volumes
		f.Targets = append(f.Targets, t)
	}
	return f
}

// stoppedOn is r's node's instance managers once the release's first step
// had Longhorn stop r: a running one no longer lists it; one in another
// state stays as it is, and the stop waits for it.
func stoppedOn(r failover.Replica) []failover.InstanceManager {
	out := make([]failover.InstanceManager, 0, len(r.Host.InstanceManagers))
	for _, im := range r.Host.InstanceManagers {
		if im.State == longhorn.InstanceManagerRunning {
			im.Replicas = maps.Clone(im.Replicas)
			delete(im.Replicas, r.Name)
		}
		out = append(out, im)
	}
	return out
}

// missingEvidence says why no source would prove the node fenced, and which enabled
// sources the report never imagines (an admin's out-of-service taint) are
// the ways left.
func missingEvidence(o failover.Observation, gate evidence.Gate) string {
	var parts []string
	if gate.Missing != "" {
		parts = append(parts, gate.Missing)
	}
	for _, source := range evidence.Enabled(o.Spec.Fencing) {
		if source.NeverImagined != "" {
			parts = append(parts, source.NeverImagined)
		}
	}
	return "No evidence source would prove the node fenced: " + strings.Join(parts, "; ")
}

// outlookOf is what the condition of the type says would block the move.
func outlookOf(d Decision, conds []metav1.Condition, conditionType string) Outlook {
	c := meta.FindStatusCondition(conds, conditionType)
	if c == nil {
		return Outlook{Reason: string(d.Phase), Message: fmt.Sprintf("the remediation would stop in phase %s", d.Phase)}
	}
	return Outlook{Reason: c.Reason, Message: c.Message}
}

// evicts counts the decision's force-deletes.
func evicts(d Decision) int {
	n := 0
	for _, a := range d.Actions {
		if a.Kind == failover.Evict {
			n++
		}
	}
	return n
}
