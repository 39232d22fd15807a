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
	// storage reads the pods, volumes and replicas of the pass.
	storage *storage.Pass
	// addedTaint is the taint this pass added to the node, for status.
	addedTaint *corev1.Taint
	obs        failover.Observation
	decision   failover.Decision
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
	lease, err := storage.NodeLease(ctx, r.Client, nodeName)
	if err != nil {
		return nil, err
	}
	s.obs.Node = &failover.Node{Name: node.Name, Ready: nodeReady(node), Heartbeat: storage.Heartbeat(node, lease)}
	observeOutOfServiceTaint(s)
	s.obs.Episode = recordedEpisode(rem.Status.FailureEpisode)
	if s.obs.TimedOut {
		return s, nil // no new step starts; nothing else to read
	}
	s.obs.ReleasedSince = releasedSince(rem.Status.Conditions)
	if fenced := meta.FindStatusCondition(rem.Status.Conditions, s3gwv1alpha1.ConditionFenced); fenced != nil &&
		fenced.Status == metav1.ConditionTrue {
		s.obs.FencedSince = &fenced.LastTransitionTime.Time
	}

	s.storage = storage.Observer{Client: r.Client, APIReader: r.APIReader, WorkloadCache: r.WorkloadCache}.Pass(rem.Spec, s.now.Time)
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
	if err := r.observeEvidence(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// observeTargets merges the recorded targets with the s3gw pods on the node
// now, then reads each one's live state. Pods on a Ready node are not
// recorded: nothing will be done to them.
func (r *RemediationReconciler) observeTargets(ctx context.Context, s *scope) error {
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
		ft, err := r.observeTarget(ctx, s, t)
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
	pods, err := workloads.List(ctx, s.storage.Pods(), s.rem.Spec, s.nodeName)
	var invalid *workloads.InvalidSelectorError
	if errors.As(err, &invalid) {
		s.obs.SelectorError = invalid.Error()
		return nil
	}
	if err != nil {
		return err
	}
	for i := range pods {
		if why := workloads.Protected(&pods[i], s.storage.Longhorn.Namespace); why != "" {
			s.obs.RefusedPods = append(s.obs.RefusedPods, pods[i].Namespace+"/"+pods[i].Name+" ("+why+")")
			continue
		}
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
	volumes, err := workloads.Volumes(ctx, r.Client, pod)
	if err != nil {
		return s3gwv1alpha1.TargetPod{}, err
	}
	return s3gwv1alpha1.TargetPod{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		Owner: owner, State: s3gwv1alpha1.TargetFound, Volumes: volumes}, nil
}

// observeTarget reads one target's pod, volumes and replacement, and
// refreshes its status entry (t) from what it saw.
func (r *RemediationReconciler) observeTarget(ctx context.Context, s *scope, t *s3gwv1alpha1.TargetPod) (failover.Target, error) {
	ft := failover.Target{Namespace: t.Namespace, Name: t.Name, UID: t.UID}
	presence, err := workloads.Present(ctx, s.storage.Pods(), *t)
	if err != nil {
		return ft, err
	}
	present := presence.Present
	ft.PodPresent, ft.ForceDeleted, ft.Finalizers = present, presence.ForceDeleted, presence.Finalizers

	t.Volumes = append([]s3gwv1alpha1.TargetVolume(nil), t.Volumes...)
	for i := range t.Volumes {
		v, err := r.observeVolume(ctx, s, &t.Volumes[i])
		if err != nil {
			return ft, err
		}
		t.Volumes[i].State = v.State()
		ft.Volumes = append(ft.Volumes, v)
	}

	if !present {
		replacement, err := workloads.Replacement(ctx, s.storage.Pods(), r.APIReader, s.rem.Spec, *t, s.nodeName)
		if err != nil {
			return ft, err
		}
		t.Replacement = replacement
		if replacement != nil {
			ft.Replacement = &failover.Replacement{Name: replacement.Name, NodeName: replacement.NodeName}
		}
	}
	t.State = ft.State()
	return ft, nil
}

// observeVolume reads one target volume: its Longhorn state, its
// VolumeAttachments on the node and the node's volumesInUse.
func (r *RemediationReconciler) observeVolume(ctx context.Context, s *scope, tv *s3gwv1alpha1.TargetVolume) (failover.Volume, error) {
	v, err := s.storage.Volume(ctx, *tv, s.nodeName)
	if err != nil || !v.Releasable() {
		return v, err
	}
	for _, va := range release.OfVolume(s.attachments, tv.PersistentVolume) {
		v.Attachments = append(v.Attachments, failover.Attachment{Name: va.Name,
			Deleting: va.DeletionTimestamp != nil, Finalizers: va.Finalizers})
	}
	v.InUseOnNode = release.InUse(s.node, tv.LonghornVolume)
	return v, nil
}

// observeEvidence reads the fencing evidence sources the spec enables,
// through their adapters (fencing.Observers), and watches what they read.
func (r *RemediationReconciler) observeEvidence(ctx context.Context, s *scope) error {
	for _, gvk := range fencing.Watched(s.rem.Spec.Fencing) {
		r.watchEvidence(ctx, gvk)
	}
	in := fencing.Input{Client: r.Client, Delegate: r.delegate(), Storage: s.storage, Remediation: s.rem, Node: s.nodeName}
	if err := fencing.Observe(ctx, in, &s.obs.Evidence); err != nil {
		return err
	}
	s.delegate = s.obs.Evidence.DelegateRef
	return nil
}

// delegate reads and writes the delegate fencing CR: observed through the
// cache, acted on after an uncached read.
func (r *RemediationReconciler) delegate() fencing.Delegate {
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

// observeOutOfServiceTaint reads the node's out-of-service taint and the
// S3GWRemediation the node's owner annotation names as its owner.
func observeOutOfServiceTaint(s *scope) {
	taint := release.FindTaint(s.node, release.OutOfServiceTaint())
	if taint == nil {
		return
	}
	owner := release.TaintOwner(s.node, *taint)
	s.obs.Node.OutOfServiceTaint = &failover.Taint{Owner: owner}
	if taint.TimeAdded != nil {
		s.obs.Node.OutOfServiceTaint.TimeAdded = &taint.TimeAdded.Time
	}
	if owner == s.rem.UID {
		// Ours: status records it even if the pass that added it could not
		// patch the status.
		s.addedTaint = taint
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

// since returns how long ago t was, or 0.
func since(now metav1.Time, t *metav1.Time) time.Duration {
	if t == nil {
		return 0
	}
	return now.Sub(t.Time)
}
