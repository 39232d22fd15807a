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

package remediation

import (
	"context"
	"errors"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/release"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// scope carries everything one pass read and decided.
type scope struct {
	rem      *s3gwv1alpha1.S3GWRemediation
	nodeName string
	// node is the node as the pass read it; the pass's node writes update it.
	node *corev1.Node
	now  metav1.Time
	// targets are the targets as read: those status records, then those
	// found on the node now, in status' order.
	targets []s3gwv1alpha1.TargetPod
	// attachments are Longhorn's VolumeAttachments on the node, read once.
	attachments []storagev1.VolumeAttachment
	// storage reads the pods, volumes and replicas of the pass.
	storage  *storage.Pass
	obs      failover.Observation
	decision failover.Decision
	// createdDelegate is the delegate CR the pass created; nil if none.
	createdDelegate *failover.RemediatorCR
	// forceDeleted counts the pods the pass force-deleted, or found gone
	// from the API when it sent the delete (ownWrites keeps their UIDs).
	forceDeleted int
}

// chains reports whether the next pass is due as soon as this one wrote its
// status: it waits for nothing but the status just recorded, or for the
// pods it force-deleted to leave, which the next pass reads from the API.
func (s *scope) chains() bool {
	return s.decision.Wait == failover.WaitForStatus || s.forceDeleted > 0
}

// writesWithNext reports whether the next pass writes this one's status
// with its own: it force-deleted pods, and no step waits for the record of
// that. Once they are gone, the next pass releases their volumes in the
// same Reconcile; a pass after a crash finds them gone in the API all the
// same. A status that must persist first (WaitForStatus) is written.
func (s *scope) writesWithNext() bool {
	return s.forceDeleted > 0 && s.decision.Wait != failover.WaitForStatus
}

func timedOut(rem *s3gwv1alpha1.S3GWRemediation) bool {
	_, ok := rem.Annotations[annotations.NhcTimedOut]
	return ok
}

// observe reads the world into an Observation, and writes nothing, not
// even into the CR: status is derived from what it returns (nextStatus).
// Reads stop early where the decision cannot use them (missing node, timed
// out, excluded node).
func (r *Reconciler) observe(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, nodeName string, node *corev1.Node) (*scope, error) {
	s := &scope{rem: rem, nodeName: nodeName, node: node, now: metav1.NewTime(r.Clock.Now()), targets: rem.Status.Targets}
	reported := meta.IsStatusConditionTrue(rem.Status.Conditions, s3gwv1alpha1.ConditionSucceeded)
	// A success of this episode has its completion time; one kept from an
	// earlier episode (restartEpisode) has none.
	s.obs = failover.Observation{Now: s.now.Time, Spec: rem.Spec, TimedOut: timedOut(rem),
		Succeeded: reported && rem.Status.CompletionTime != nil, SuccessReported: reported}
	if node == nil {
		return s, nil
	}
	lease, err := storage.NodeLease(ctx, r.Client, nodeName)
	if err != nil {
		return nil, err
	}
	hb := storage.Heartbeat(node, lease)
	hb.Seen = recordedHeartbeat(rem.Status.Heartbeat).Next(hb, s.now.Time)
	s.obs.Node = &failover.Node{Name: node.Name, Ready: nodeReady(node), Heartbeat: hb,
		Excluded: failover.ExcludedFromRemediation(node.Labels)}
	observeOutOfServiceTaint(s)
	s.obs.Episode = recordedEpisode(rem.Status.FailureEpisode)
	if s.obs.TimedOut || s.obs.Node.Excluded {
		// No new step starts; only whether NHC's time-out may reach the
		// delegate is still to read.
		return s, r.observeTimedOutDelegate(ctx, s)
	}
	s.obs.ReleasedSince = releasedSince(rem.Status.Conditions)
	if fenced := meta.FindStatusCondition(rem.Status.Conditions, s3gwv1alpha1.ConditionFenced); fenced != nil &&
		fenced.Status == metav1.ConditionTrue {
		s.obs.FencedSince = &fenced.LastTransitionTime.Time
	}

	s.storage = r.storageObserver().Pass(rem.Spec, s.now.Time)
	if err := s.storage.ReadLonghorn(ctx); err != nil {
		return nil, err
	}
	s.obs.LonghornAvailable = s.storage.LonghornAvailable
	if s.obs.LonghornAvailable {
		r.watchLonghorn(ctx)
	}
	// One list serves every target volume and the orphan search.
	if s.attachments, err = release.NodeAttachments(ctx, r.Client, nodeName); err != nil {
		return nil, err
	}
	if err := r.observeTargets(ctx, s); err != nil {
		return nil, err
	}
	if !s.obs.Node.Ready {
		if err := r.observeOtherRemediations(ctx, s); err != nil {
			return nil, err
		}
	}
	if err := r.observeEvidence(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// observeEvidence reads the fencing evidence sources the spec enables,
// through their adapters (fencing.Observers), and watches what they read.
func (r *Reconciler) observeEvidence(ctx context.Context, s *scope) error {
	for _, gvk := range fencing.Watched(s.rem.Spec.Fencing) {
		r.watchEvidence(ctx, gvk)
	}
	in := fencing.Input{Client: r.Client, Delegate: r.delegate(), Storage: s.storage, Remediation: s.rem, Node: s.nodeName}
	if err := fencing.Observe(ctx, in, &s.obs.Evidence); err != nil {
		return err
	}
	s.obs.Sightings = failover.NextSightings(recordedSightings(s.rem.Status.EvidenceSightings), s.obs)
	return nil
}

// observeTimedOutDelegate reads, for a timed-out remediation, its delegate:
// a delegate that succeeded is not timed out (failover.RemediatorCR.MayTimeOut).
func (r *Reconciler) observeTimedOutDelegate(ctx context.Context, s *scope) error {
	if !s.obs.TimedOut || s.rem.Spec.Fencing.Delegate == nil {
		return nil
	}
	state, err := r.delegate().Observe(ctx, s.rem, s.nodeName)
	var invalid *fencing.DelegateError
	if err != nil && !errors.As(err, &invalid) {
		return err
	}
	s.obs.Evidence.Delegate, s.obs.Evidence.DelegateRef = state.Own, state.Ref
	return nil
}

// delegate reads and writes the delegate fencing CR: observed through the
// cache, acted on after an uncached read.
func (r *Reconciler) delegate() fencing.Delegate {
	return fencing.Delegate{Client: r.Client, Live: r.APIReader}
}

// releasedSince is when the targets became both evicted and released (the
// later of the two conditions' transitions), which starts the replacement
// timeout; nil unless both hold.
func releasedSince(conds []metav1.Condition) *time.Time {
	evicted := meta.FindStatusCondition(conds, s3gwv1alpha1.ConditionWorkloadEvicted)
	released := meta.FindStatusCondition(conds, s3gwv1alpha1.ConditionAttachmentsReleased)
	if evicted == nil || released == nil || evicted.Status != metav1.ConditionTrue || released.Status != metav1.ConditionTrue {
		return nil
	}
	t := evicted.LastTransitionTime.Time
	if released.LastTransitionTime.After(t) {
		t = released.LastTransitionTime.Time
	}
	return &t
}

// observeOutOfServiceTaint reads the node's out-of-service taint, the
// S3GWRemediation the node's owner annotation names as its owner while it
// names that taint, and whether the annotation is stale.
func observeOutOfServiceTaint(s *scope) {
	wanted := release.OutOfServiceTaint()
	owner, stale := release.TaintOwnership(s.node, wanted)
	s.obs.Node.StaleTaintOwner = stale
	taint := release.FindTaint(s.node, wanted)
	if taint == nil {
		return
	}
	s.obs.Node.OutOfServiceTaint = &failover.Taint{Owner: owner, Ours: owner != "" && owner == s.rem.UID}
	if taint.TimeAdded != nil {
		s.obs.Node.OutOfServiceTaint.TimeAdded = &taint.TimeAdded.Time
	}
}

// recordedEpisode converts the recorded failure episode; nil before one.
func recordedEpisode(e *s3gwv1alpha1.FailureEpisode) *failover.Episode {
	if e == nil {
		return nil
	}
	out := &failover.Episode{Ready: e.ReadyStatus}
	if e.NotReadySince != nil {
		out.ReadySince = e.NotReadySince.Time
	}
	if e.KubeletPostedAt != nil {
		out.KubeletPosted = e.KubeletPostedAt.Time
	}
	if e.RecoveredAt != nil {
		out.RecoveredAt = e.RecoveredAt.Time
	}
	if e.ReadySince != nil {
		out.RecoveredReadySince = e.ReadySince.Time
	}
	return out
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
