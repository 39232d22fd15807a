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

// Package metrics exports the remediation's Prometheus metrics through
// controller-runtime's registry (served on the manager's metrics endpoint).
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

const namespace = "s3gw_remediation"

// Recorder records what remediations do. Safe for concurrent use.
type Recorder struct {
	remediations        *prometheus.CounterVec
	phaseDuration       *prometheus.HistogramVec
	podsEvicted         prometheus.Counter
	attachmentsReleased *prometheus.CounterVec
	fencingBlocked      *prometheus.GaugeVec
	protection          *protectionMetrics
	phases              *phaseMetrics
	warmth              *warmthMetrics

	mu      sync.Mutex
	blocked map[types.UID]string // remediation → reason its gate is closed
}

// Default is registered with controller-runtime's metrics registry.
var Default = New(ctrlmetrics.Registry)

// New creates a Recorder and registers its metrics with reg.
func New(reg prometheus.Registerer) *Recorder {
	r := &Recorder{
		remediations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "remediations_total",
			Help: "Remediations that ended, by result (Succeeded, Failed, Stopped) and reason.",
		}, []string{"result", "reason"}),
		phaseDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "phase_duration_seconds",
			Help:    "Time a remediation spent in each phase.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800},
		}, []string{labelPhase}),
		podsEvicted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "pods_evicted_total",
			Help: "s3gw pods force-deleted from failed nodes.",
		}),
		attachmentsReleased: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "attachments_released_total",
			Help: "Longhorn attachments released from failed nodes, by release strategy.",
		}, []string{"strategy"}),
		fencingBlocked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "fencing_blocked",
			Help: "Remediations currently held by the fencing gate, by what is missing.",
		}, []string{"reason"}),
		blocked:    map[types.UID]string{},
		protection: newProtectionMetrics(),
		phases:     newPhaseMetrics(),
		warmth:     newWarmthMetrics(),
	}
	reg.MustRegister(r.remediations, r.phaseDuration, r.podsEvicted, r.attachmentsReleased, r.fencingBlocked,
		r.protection.protected, r.protection.expectedRTO, r.protection.selected, r.phases.phase)
	reg.MustRegister(r.warmth.candidates, r.warmth.warm)
	// An alert rule matches this reason: export it at 0 from the start,
	// so the rule reads a series rather than an absence.
	r.fencingBlocked.WithLabelValues(s3gwv1alpha1.ReasonDelegateNotStarted)
	return r
}

// RemediationEnded counts a remediation reaching a final result.
func (r *Recorder) RemediationEnded(result, reason string) {
	r.remediations.WithLabelValues(result, reason).Inc()
}

// PhaseEnded observes how long a remediation spent in a phase.
func (r *Recorder) PhaseEnded(phase string, d time.Duration) {
	r.phaseDuration.WithLabelValues(phase).Observe(d.Seconds())
}

// PodEvicted counts one force-deleted pod.
func (r *Recorder) PodEvicted() { r.podsEvicted.Inc() }

// AttachmentReleased counts one released attachment.
func (r *Recorder) AttachmentReleased(strategy string) {
	r.attachmentsReleased.WithLabelValues(strategy).Inc()
}

// SetFencingBlocked records that a remediation's gate is closed for reason,
// or open when reason is empty.
func (r *Recorder) SetFencingBlocked(uid types.UID, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.blocked[uid]; ok {
		if old == reason {
			return
		}
		r.fencingBlocked.WithLabelValues(old).Dec()
		delete(r.blocked, uid)
	}
	if reason != "" {
		r.blocked[uid] = reason
		r.fencingBlocked.WithLabelValues(reason).Inc()
	}
}
