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

package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// phaseMetrics is the phase each remediation is in now: one series per
// CR, so that an alert can name the node of a remediation that stays in a
// phase (the phase_duration histogram only sees a phase once it is left).
type phaseMetrics struct {
	phase *prometheus.GaugeVec

	mu       sync.Mutex
	exported map[types.NamespacedName]prometheus.Labels
}

// phaseLabels name the remediation, its node and its phase.
var phaseLabels = []string{labelNamespace, "remediation", labelNode, labelPhase}

const (
	labelNamespace = "namespace"
	labelPhase     = "phase"
	labelNode      = "node"
)

func newPhaseMetrics() *phaseMetrics {
	return &phaseMetrics{
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "remediation_phase",
			Help: "1 for the phase each S3GWRemediation is in now; the series goes when the CR does.",
		}, phaseLabels),
		exported: map[types.NamespacedName]prometheus.Labels{},
	}
}

// SetPhase records the phase a remediation is in, replacing its previous
// series.
func (r *Recorder) SetPhase(remediation types.NamespacedName, node, phase string) {
	m := r.phases
	l := prometheus.Labels{labelNamespace: remediation.Namespace, "remediation": remediation.Name, labelNode: node, labelPhase: phase}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.exported[remediation]; ok {
		if sameLabels(old, l) {
			return
		}
		m.phase.Delete(old)
	}
	m.phase.With(l).Set(1)
	m.exported[remediation] = l
}

// ForgetPhase drops the series of a remediation that is gone.
func (r *Recorder) ForgetPhase(remediation types.NamespacedName) {
	m := r.phases
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.exported[remediation]; ok {
		m.phase.Delete(old)
		delete(m.exported, remediation)
	}
}

func sameLabels(a, b prometheus.Labels) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
