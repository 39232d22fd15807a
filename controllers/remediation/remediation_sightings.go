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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// What the controller saw, on its own clock, kept in status between passes
// and across restarts (failover.HeartbeatSighting, failover.EvidenceSighting).
// Times are kept to the microsecond: the gate compares them with each other.

// recordedHeartbeat converts status' heartbeat sighting; zero before one.
func recordedHeartbeat(h *s3gwv1alpha1.HeartbeatSighting) failover.HeartbeatSighting {
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

// heartbeatStatus converts a heartbeat sighting for status.
func heartbeatStatus(s failover.HeartbeatSighting) *s3gwv1alpha1.HeartbeatSighting {
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

// recordedSightings converts status' evidence sightings.
func recordedSightings(in []s3gwv1alpha1.EvidenceSighting) []failover.EvidenceSighting {
	out := make([]failover.EvidenceSighting, 0, len(in))
	for _, s := range in {
		out = append(out, failover.EvidenceSighting{Name: s.Name, PendingAt: microTime(s.PendingAt), ProvenAt: microTime(s.ProvenAt),
			FailedAt: microTime(s.FailedAt)})
	}
	return out
}

// sightingsStatus converts evidence sightings for status.
func sightingsStatus(in []failover.EvidenceSighting) []s3gwv1alpha1.EvidenceSighting {
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
