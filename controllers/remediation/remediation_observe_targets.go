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
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// observeTargets adds the s3gw pods on the node now to the targets the
// memory records, then reads each one's live state. Pods on a Ready node
// are not looked for: nothing will be done to them.
func (r *Reconciler) observeTargets(ctx context.Context, s *scope) error {
	if !s.obs.Node.Ready {
		recorded := map[string]bool{}
		for _, t := range s.targets {
			recorded[t.Key()] = true
		}
		s.targets = slices.Clone(s.targets)
		if err := r.findTargets(ctx, s, recorded); err != nil {
			return err
		}
	}
	for _, t := range s.targets {
		ft, err := r.observeTarget(ctx, s, t)
		if err != nil {
			return err
		}
		s.obs.Targets = append(s.obs.Targets, ft)
	}
	return nil
}

// findTargets adds the s3gw pods on the node, then the s3gw volumes still
// attached to it whose pod is already gone, to the targets.
func (r *Reconciler) findTargets(ctx context.Context, s *scope, recorded map[string]bool) error {
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

func (r *Reconciler) newTarget(ctx context.Context, pod *corev1.Pod) (s3gwv1alpha1.RecordedTarget, error) {
	owner, err := workloads.Owner(ctx, r.APIReader, pod)
	if err != nil {
		return s3gwv1alpha1.RecordedTarget{}, err
	}
	volumes, err := workloads.Volumes(ctx, r.Client, pod)
	if err != nil {
		return s3gwv1alpha1.RecordedTarget{}, err
	}
	return s3gwv1alpha1.RecordedTarget{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		Owner: owner, Volumes: volumes}, nil
}

// observeTarget reads one target's pod, volumes and replacement.
func (r *Reconciler) observeTarget(ctx context.Context, s *scope, t s3gwv1alpha1.RecordedTarget) (failover.Target, error) {
	ft := failover.Target{Namespace: t.Namespace, Name: t.Name, UID: t.UID, Owner: t.Owner}
	presence, err := r.presence(ctx, s, t)
	if err != nil {
		return ft, err
	}
	ft.PodPresent, ft.ForceDeleted, ft.Finalizers = presence.Present, presence.ForceDeleted, presence.Finalizers
	for _, tv := range t.Volumes {
		v, err := r.observeVolume(ctx, s, tv)
		if err != nil {
			return ft, err
		}
		ft.Volumes = append(ft.Volumes, v)
	}
	if ft.PodPresent {
		return ft, nil
	}
	replacement, err := workloads.Replacement(ctx, s.storage.Pods(), r.APIReader, s.rem.Spec, t, s.nodeName)
	if replacement != nil {
		ft.Replacement = &failover.Replacement{Name: replacement.Name, NodeName: replacement.NodeName}
	}
	return ft, err
}

// presence reads whether a target's pod is in the API: from the cache, but
// for a pod this process force-deleted that the cache still shows, which is
// read from the API until the cache sees it go (ownwrites).
func (r *Reconciler) presence(ctx context.Context, s *scope, t s3gwv1alpha1.RecordedTarget) (workloads.Presence, error) {
	presence, err := workloads.Present(ctx, s.storage.Pods(), t)
	key := client.ObjectKeyFromObject(s.rem)
	if err != nil || !r.own.IsDeleted(key, t.UID) {
		return presence, err
	}
	if !presence.Present {
		r.own.GoneFromCache(key, t.UID)
		return presence, nil
	}
	return workloads.Present(ctx, r.APIReader, t)
}

// observeVolume reads one target volume: its Longhorn state, its
// VolumeAttachments on the node and the node's volumesInUse.
func (r *Reconciler) observeVolume(ctx context.Context, s *scope, tv s3gwv1alpha1.RecordedVolume) (failover.Volume, error) {
	v, err := s.storage.Volume(ctx, tv, s.nodeName)
	if err != nil || !v.Releasable() {
		return v, err
	}
	for _, va := range attachments.OfVolume(s.attachments, tv.PersistentVolume) {
		v.Attachments = append(v.Attachments, failover.Attachment{Name: va.Name, UID: va.UID,
			Deleting: va.DeletionTimestamp != nil, Finalizers: slices.Clone(va.Finalizers)})
	}
	v.InUseOnNode = attachments.InUse(s.node, tv.LonghornVolume)
	return v, nil
}
