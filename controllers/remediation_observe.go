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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// scope carries everything one pass read and decided.
type scope struct {
	rem      *s3gwv1alpha1.S3GWRemediation
	nodeName string
	node     *corev1.Node
	now      metav1.Time
	// targets is status.targets as it should be written: recorded targets
	// plus newly found ones, with fresh states.
	targets  []s3gwv1alpha1.TargetPod
	delegate *corev1.ObjectReference
	// attachments are Longhorn's VolumeAttachments on the node, read once.
	attachments []storagev1.VolumeAttachment
	obs         failover.Observation
	decision    failover.Decision
}

func timedOut(rem *s3gwv1alpha1.S3GWRemediation) bool {
	_, ok := rem.Annotations[annotations.NhcTimedOut]
	return ok
}

// observe reads the world into an Observation. Reads stop early where the
// decision cannot use them (missing node, timed out).
func (r *RemediationReconciler) observe(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, nodeName string, node *corev1.Node) (*scope, error) {
	s := &scope{rem: rem, nodeName: nodeName, node: node, now: metav1.NewTime(r.Clock.Now()), targets: rem.Status.Targets}
	s.obs = failover.Observation{Now: s.now.Time, Spec: rem.Spec, TimedOut: timedOut(rem),
		Succeeded: meta.IsStatusConditionTrue(rem.Status.Conditions, s3gwv1alpha1.ConditionSucceeded)}
	if node == nil {
		return s, nil
	}
	ownTaint := taintRecorded(rem, fencing.OutOfServiceTaint())
	hasTaint := fencing.HasTaint(node, fencing.OutOfServiceTaint())
	if hasTaint && !ownTaint {
		// A taint another remediation of this node added is no evidence either.
		byPeer, err := r.taintRecordedByPeer(ctx, rem, nodeName)
		if err != nil {
			return nil, err
		}
		hasTaint = !byPeer
	}
	s.obs.Node = &failover.Node{
		Name:                     node.Name,
		Ready:                    nodeReady(node),
		OwnOutOfServiceTaint:     hasTaint && ownTaint,
		ForeignOutOfServiceTaint: hasTaint && !ownTaint,
	}
	s.obs.OutOfServiceTaintRecorded = ownTaint
	if s.obs.TimedOut {
		return s, nil // no new step starts; nothing else to read
	}
	s.obs.ReleasedSince = releasedSince(rem.Status.Conditions)

	lh := longhorn.State{Reader: r.APIReader, Namespace: rem.Spec.Release.LonghornNamespace}
	if lh.Namespace == "" {
		lh.Namespace = "longhorn-system"
	}
	available, err := lh.Available(ctx)
	if err != nil {
		return nil, err
	}
	s.obs.LonghornAvailable = available
	// One list serves every target volume and the orphan search.
	if s.attachments, err = longhorn.NodeAttachments(ctx, r.APIReader, nodeName); err != nil {
		return nil, err
	}
	if err := r.observeTargets(ctx, s, lh); err != nil {
		return nil, err
	}
	if err := r.observeEvidence(ctx, s, lh); err != nil {
		return nil, err
	}
	return s, nil
}

// observeTargets merges the recorded targets with the s3gw pods on the node
// now, then reads each one's live state. Pods on a Ready node are not
// recorded: nothing will be done to them.
func (r *RemediationReconciler) observeTargets(ctx context.Context, s *scope, lh longhorn.State) error {
	recorded := map[string]bool{}
	for _, t := range s.targets {
		recorded[workloads.Key(t)] = true
	}
	if !s.obs.Node.Ready {
		if err := r.findTargets(ctx, s, recorded); err != nil {
			return err
		}
	}

	s.targets = append([]s3gwv1alpha1.TargetPod(nil), s.targets...)
	for i := range s.targets {
		t := &s.targets[i]
		ft, err := r.observeTarget(ctx, s, lh, t)
		if err != nil {
			return err
		}
		ft.Recorded = recorded[workloads.Key(*t)]
		s.obs.Targets = append(s.obs.Targets, ft)
	}
	return nil
}

// findTargets adds the s3gw pods on the node, then the s3gw volumes still
// attached to it whose pod is already gone, to the targets.
func (r *RemediationReconciler) findTargets(ctx context.Context, s *scope, recorded map[string]bool) error {
	pods, err := workloads.List(ctx, r.APIReader, s.rem.Spec, s.nodeName)
	if err != nil {
		return err
	}
	for i := range pods {
		if recorded[string(pods[i].UID)] {
			continue
		}
		t, err := r.newTarget(ctx, &pods[i])
		if err != nil {
			return err
		}
		s.targets = append(s.targets, t)
	}
	covered := map[string]bool{}
	for _, t := range s.targets {
		for _, v := range t.Volumes {
			covered[v.PersistentVolume] = true
		}
	}
	orphans, err := workloads.Orphans(ctx, r.APIReader, s.rem.Spec, s.nodeName, s.attachments, covered)
	if err != nil {
		return err
	}
	s.targets = append(s.targets, orphans...)
	return nil
}

func (r *RemediationReconciler) newTarget(ctx context.Context, pod *corev1.Pod) (s3gwv1alpha1.TargetPod, error) {
	owner, err := workloads.Owner(ctx, r.APIReader, pod)
	if err != nil {
		return s3gwv1alpha1.TargetPod{}, err
	}
	volumes, err := workloads.Volumes(ctx, r.APIReader, pod)
	if err != nil {
		return s3gwv1alpha1.TargetPod{}, err
	}
	return s3gwv1alpha1.TargetPod{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		Owner: owner, State: s3gwv1alpha1.TargetFound, Volumes: volumes}, nil
}

// observeTarget reads one target's pod, volumes and replacement, and
// refreshes its status entry (t) from what it saw.
func (r *RemediationReconciler) observeTarget(ctx context.Context, s *scope, lh longhorn.State, t *s3gwv1alpha1.TargetPod) (failover.Target, error) {
	ft := failover.Target{Namespace: t.Namespace, Name: t.Name, UID: t.UID}
	presence, err := workloads.Present(ctx, r.APIReader, *t)
	if err != nil {
		return ft, err
	}
	present := presence.Present
	ft.PodPresent, ft.ForceDeleted = present, presence.ForceDeleted

	t.Volumes = append([]s3gwv1alpha1.TargetVolume(nil), t.Volumes...)
	allReleased := true
	for i := range t.Volumes {
		v, err := r.observeVolume(ctx, s, lh, &t.Volumes[i])
		if err != nil {
			return ft, err
		}
		if v.Releasable() && !v.Released() {
			allReleased = false
		}
		ft.Volumes = append(ft.Volumes, v)
	}

	if !present {
		replacement, err := workloads.Replacement(ctx, r.APIReader, s.rem.Spec, *t, s.nodeName)
		if err != nil {
			return ft, err
		}
		t.Replacement = replacement
		if replacement != nil {
			ft.Replacement = &failover.Replacement{Name: replacement.Name, NodeName: replacement.NodeName}
		}
	}
	switch {
	case present:
		t.State = s3gwv1alpha1.TargetFound
	case !allReleased:
		t.State = s3gwv1alpha1.TargetEvicted
	case t.Replacement == nil:
		t.State = s3gwv1alpha1.TargetReleased
	default:
		t.State = s3gwv1alpha1.TargetReplaced
	}
	return ft, nil
}

func (r *RemediationReconciler) observeVolume(ctx context.Context, s *scope, lh longhorn.State, tv *s3gwv1alpha1.TargetVolume) (failover.Volume, error) {
	v := failover.Volume{Claim: tv.ClaimName, PersistentVolume: tv.PersistentVolume, LonghornVolume: tv.LonghornVolume}
	if tv.State == s3gwv1alpha1.VolumeSkipped {
		v.SkipReason = tv.Reason
		return v, nil
	}
	v.KubeAttachment = len(longhorn.OfVolume(s.attachments, tv.PersistentVolume)) > 0
	v.InUseOnNode = longhorn.InUse(s.node, tv.LonghornVolume)
	if s.obs.LonghornAvailable {
		found, err := lh.VolumeExists(ctx, tv.LonghornVolume)
		if err != nil {
			return v, err
		}
		v.LonghornVolumeMissing = !found
		if v.LonghornTicket, err = lh.TicketOnNode(ctx, tv.LonghornVolume, s.nodeName); err != nil {
			return v, err
		}
		placement, err := lh.Replicas(ctx, tv.LonghornVolume, s.nodeName)
		if err != nil {
			return v, err
		}
		v.ReplicaOnFailedNode, v.HealthyReplicaElsewhere = placement.OnNode, placement.HealthyElsewhere
	}
	tv.State = s3gwv1alpha1.VolumeAttached
	if v.Released() {
		tv.State = s3gwv1alpha1.VolumeReleased
	}
	return v, nil
}

// observeEvidence reads the fencing evidence sources the spec enables.
func (r *RemediationReconciler) observeEvidence(ctx context.Context, s *scope, lh longhorn.State) error {
	fencingSpec := s.rem.Spec.Fencing
	if fencingSpec.Mode == s3gwv1alpha1.FencingModeDisabled {
		return nil
	}
	if fencingSpec.StorageIsolationEnabled() && s.obs.LonghornAvailable {
		down, err := lh.NodeDown(ctx, s.nodeName)
		if err != nil {
			return err
		}
		s.obs.Evidence.LonghornNodeDown = down
	}
	if len(fencingSpec.Remediators) > 0 {
		crs, err := fencing.Remediators(ctx, r.APIReader, fencingSpec.Remediators, s.nodeName)
		if err != nil {
			return err
		}
		s.obs.Evidence.Remediators = crs
	}
	if fencingSpec.Delegate != nil {
		d := fencing.Delegate{Client: r.Client, Reader: r.APIReader}
		cr, ref, err := d.Observe(ctx, s.rem, s.nodeName)
		var invalid *fencing.DelegateError
		switch {
		case errors.As(err, &invalid):
			s.obs.Evidence.DelegateError = invalid.Reason
		case err != nil:
			return err
		default:
			s.obs.Evidence.Delegate, s.delegate = cr, ref
		}
	}
	return nil
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

// taintRecordedByPeer reports whether another remediation of the same node
// recorded the out-of-service taint as its own.
func (r *RemediationReconciler) taintRecordedByPeer(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node string) (bool, error) {
	list := &s3gwv1alpha1.S3GWRemediationList{}
	if err := r.Client.List(ctx, list); err != nil {
		return false, fmt.Errorf("listing S3GWRemediations: %w", err)
	}
	for i := range list.Items {
		peer := &list.Items[i]
		if peer.UID != rem.UID && fencing.NodeName(peer) == node && taintRecorded(peer, fencing.OutOfServiceTaint()) {
			return true, nil
		}
	}
	return false, nil
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func taintRecorded(rem *s3gwv1alpha1.S3GWRemediation, taint corev1.Taint) bool {
	for i := range rem.Status.AddedTaints {
		if rem.Status.AddedTaints[i].MatchTaint(&taint) {
			return true
		}
	}
	return false
}

// since returns how long ago t was, or 0.
func since(now metav1.Time, t *metav1.Time) time.Duration {
	if t == nil {
		return 0
	}
	return now.Sub(t.Time)
}
