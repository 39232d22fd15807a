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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
)

// Remember is the memory after a step that knew s and decided d, from the
// memory m it recalled. Only the step writes it, from facts and its own
// decision, never from the conditions it reports:
//   - the heartbeat and evidence sightings as the step advanced them;
//   - the targets, every one observed (recorded or just found), and the
//     failure the remediation works on;
//   - when the gate was found open (FencedAt, the release deadline's start)
//     and when the targets were found moved off (ReleasedAt, the
//     replacement timeout's start), each kept while the fact is true and
//     cleared when it no longer does;
//   - whether Succeeded=True is reported, and when this failure's was.
//
// A new failure forgets the old one's targets, times and outcome; a success
// reported for it is still reported (KeepSucceeded).
func Remember(m Memory, s failover.State, d Decision) Memory {
	next := *m.DeepCopy()
	now := metav1.NewTime(s.Now)
	if s.Node != nil {
		next.Heartbeat = heartbeatSightingMemory(s.Node.Heartbeat.Seen)
	}
	if sightsEvidence(s) {
		next.EvidenceSightings = sightingsMemory(s.Sightings)
	}
	if len(s.Targets) > 0 {
		next.Targets = targetsMemory(s.Targets)
	}
	if d.RecordEpisode != nil {
		next.Episode = episodeMemory(*d.RecordEpisode)
	}
	if d.reports() {
		if open, known := gateFound(d); known {
			next.FencedAt = since(next.FencedAt, open, now)
		}
		if moved, known := movedOffFound(s, d); known {
			next.ReleasedAt = since(next.ReleasedAt, moved, now)
		}
		switch d.Phase {
		case s3gwv1alpha1.PhaseSucceeded:
			next.SuccessReported = true
		case s3gwv1alpha1.PhaseFailed, s3gwv1alpha1.PhaseStopped:
			next.SuccessReported = false
		}
		if d.Finished() && next.SucceededAt == nil {
			next.SucceededAt = &now
		}
	}
	if d.RestartEpisode != nil {
		next.Episode = episodeMemory(*d.RestartEpisode)
		next.Targets, next.FencedAt, next.ReleasedAt, next.SucceededAt = nil, nil, nil, nil
	}
	return next
}

// Created is the memory after the executor created a fencer's CR cr for a
// step that observed the world at now: the CR did not exist then, so it
// proved nothing after the heartbeat that step read (evidence.SawCreated).
func Created(m Memory, cr failover.RemediatorCR, now time.Time) Memory {
	next := *m.DeepCopy()
	next.EvidenceSightings = sightingsMemory(evidence.SawCreated(sightingsOf(m.EvidenceSightings), cr, now))
	return next
}

// since is a fact's start: kept while the fact is true, now when it becomes
// true,
// nil once it no longer does.
func since(start *metav1.Time, fact bool, now metav1.Time) *metav1.Time {
	switch {
	case !fact:
		return nil
	case start == nil:
		return &now
	}
	return start
}

// gateFound says whether the step found the gate open, from the stage that
// judged it; known is false for a step that did not look.
func gateFound(d Decision) (open, known bool) {
	if d.block(s3gwv1alpha1.ConditionFenced) != nil {
		return false, true
	}
	return true, d.Stage == StageStorage || d.Stage == StageRelease
}

// movedOffFound says whether the step found every target's pod gone and
// every volume released, with nothing blocking either; known is false for
// a step that did not look at the recorded targets.
func movedOffFound(s failover.State, d Decision) (moved, known bool) {
	if d.Stage == StageStart || len(s.Targets) == 0 {
		return false, false
	}
	return failover.MovedOff(s.Targets) && d.block(s3gwv1alpha1.ConditionWorkloadEvicted) == nil &&
		d.block(s3gwv1alpha1.ConditionAttachmentsReleased) == nil, true
}

func targetsMemory(targets []failover.Target) []s3gwv1alpha1.RecordedTarget {
	out := make([]s3gwv1alpha1.RecordedTarget, 0, len(targets))
	for _, t := range targets {
		r := s3gwv1alpha1.RecordedTarget{Namespace: t.Namespace, Name: t.Name, UID: t.UID, Owner: t.Owner.DeepCopy()}
		for _, v := range t.Volumes {
			r.Volumes = append(r.Volumes, s3gwv1alpha1.RecordedVolume{ClaimName: v.Claim, PersistentVolume: v.PersistentVolume,
				LonghornVolume: v.LonghornVolume, SkipReason: v.SkipReason})
		}
		out = append(out, r)
	}
	return out
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

func episodeOf(e *s3gwv1alpha1.FailureEpisode) *failover.Episode {
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

func episodeMemory(e failover.Episode) *s3gwv1alpha1.FailureEpisode {
	out := &s3gwv1alpha1.FailureEpisode{ReadyStatus: e.Ready}
	if !e.ReadySince.IsZero() {
		out.NotReadySince = ptr.To(metav1.NewTime(e.ReadySince))
	}
	if !e.KubeletPosted.IsZero() {
		out.KubeletPostedAt = ptr.To(metav1.NewTime(e.KubeletPosted))
	}
	if !e.RecoveredAt.IsZero() {
		out.RecoveredAt = ptr.To(metav1.NewMicroTime(e.RecoveredAt))
	}
	if !e.RecoveredReadySince.IsZero() {
		out.ReadySince = ptr.To(metav1.NewTime(e.RecoveredReadySince))
	}
	return out
}

// heartbeatSightingOf and the functions below keep the sightings to the
// microsecond: the gate compares them with each other.
func heartbeatSightingOf(h *s3gwv1alpha1.HeartbeatSighting) failover.HeartbeatSighting {
	if h == nil {
		return failover.HeartbeatSighting{}
	}
	out := failover.HeartbeatSighting{At: h.SeenAt.Time, Witnessed: h.Witnessed, Ready: h.ReadyStatus,
		ChangedUnderCondition: h.ChangedUnderCondition}
	if h.LeaseRenewTime != nil {
		out.LeaseRenewed = h.LeaseRenewTime.Time
	}
	if h.KubeletPostedAt != nil {
		out.KubeletPosted = h.KubeletPostedAt.Time
	}
	if h.NotReadySince != nil {
		out.ReadySince = h.NotReadySince.Time
	}
	return out
}

func heartbeatSightingMemory(s failover.HeartbeatSighting) *s3gwv1alpha1.HeartbeatSighting {
	out := &s3gwv1alpha1.HeartbeatSighting{SeenAt: metav1.NewMicroTime(s.At), Witnessed: s.Witnessed, ReadyStatus: s.Ready,
		ChangedUnderCondition: s.ChangedUnderCondition}
	if !s.LeaseRenewed.IsZero() {
		out.LeaseRenewTime = ptr.To(metav1.NewMicroTime(s.LeaseRenewed))
	}
	if !s.KubeletPosted.IsZero() {
		out.KubeletPostedAt = ptr.To(metav1.NewTime(s.KubeletPosted))
	}
	if !s.ReadySince.IsZero() {
		out.NotReadySince = ptr.To(metav1.NewTime(s.ReadySince))
	}
	return out
}

func sightingsOf(in []s3gwv1alpha1.EvidenceSighting) []failover.EvidenceSighting {
	out := make([]failover.EvidenceSighting, 0, len(in))
	for _, s := range in {
		out = append(out, failover.EvidenceSighting{Name: s.Name, PendingAt: microTime(s.PendingAt), ProvenAt: microTime(s.ProvenAt),
			FailedAt: microTime(s.FailedAt)})
	}
	return out
}

func sightingsMemory(in []failover.EvidenceSighting) []s3gwv1alpha1.EvidenceSighting {
	out := make([]s3gwv1alpha1.EvidenceSighting, 0, len(in))
	for _, s := range in {
		out = append(out, s3gwv1alpha1.EvidenceSighting{Name: s.Name, PendingAt: toMicroTime(s.PendingAt), ProvenAt: toMicroTime(s.ProvenAt),
			FailedAt: toMicroTime(s.FailedAt)})
	}
	return out
}

func microTime(t *metav1.MicroTime) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

func toMicroTime(t *time.Time) *metav1.MicroTime {
	if t == nil {
		return nil
	}
	return ptr.To(metav1.NewMicroTime(*t))
}
