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

// PodWarmth is how warm the candidate nodes of one pod of a template's
// protection report are (spec.prePull.enabled).
type PodWarmth struct {
	Namespace, Pod, Node string
	// Reason is the warmth's reason (AllCandidatesWarm, …).
	Reason string
	// Candidates and Warm count the candidate nodes and those that hold
	// the pod's images.
	Candidates, Warm int32
}

// warmthMetrics are the per-pod gauges of image warmth. Like the
// protection gauges, a template's series are replaced as a whole.
type warmthMetrics struct {
	candidates *prometheus.GaugeVec
	warm       *prometheus.GaugeVec

	mu       sync.Mutex
	exported map[types.NamespacedName][]prometheus.Labels
}

func newWarmthMetrics() *warmthMetrics {
	return &warmthMetrics{
		candidates: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "pod_candidate_nodes",
			Help: "Nodes the s3gw pod's replacement may be scheduled to if its node failed now (templates with spec.prePull.enabled).",
		}, podLabels),
		warm: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "pod_warm_candidate_nodes",
			Help: "Candidate nodes of the s3gw pod whose pre-pull pod shows the pod's images pulled; reason says why not all (templates with spec.prePull.enabled).",
		}, podLabels),
		exported: map[types.NamespacedName][]prometheus.Labels{},
	}
}

// SetWarmth replaces the warmth gauges of a template's pods; none for a
// template without spec.prePull.enabled.
func (r *Recorder) SetWarmth(template types.NamespacedName, pods []PodWarmth) {
	m := r.warmth
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(template)
	exported := make([]prometheus.Labels, 0, len(pods))
	for _, p := range pods {
		l := prometheus.Labels{labelTemplateNamespace: template.Namespace, labelTemplate: template.Name,
			labelNamespace: p.Namespace, labelPod: p.Pod, labelNode: p.Node, labelReason: p.Reason}
		m.candidates.With(l).Set(float64(p.Candidates))
		m.warm.With(l).Set(float64(p.Warm))
		exported = append(exported, l)
	}
	m.exported[template] = exported
}

// ForgetWarmth drops the gauges of a deleted template.
func (r *Recorder) ForgetWarmth(template types.NamespacedName) {
	m := r.warmth
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(template)
}

func (m *warmthMetrics) forget(template types.NamespacedName) {
	for _, l := range m.exported[template] {
		m.candidates.Delete(l)
		m.warm.Delete(l)
	}
	delete(m.exported, template)
}
