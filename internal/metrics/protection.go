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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// PodProtection is one pod of a template's protection report.
type PodProtection struct {
	Namespace, Pod, Node, Reason string
	Protected                    bool
	// ExpectedRTO is zero when the pod is not protected.
	ExpectedRTO time.Duration
}

// protectionMetrics are the per-pod gauges of the protection report. Each
// template's series are replaced as a whole, so a pod that left, moved or
// changed reason leaves no stale series behind.
type protectionMetrics struct {
	protected   *prometheus.GaugeVec
	expectedRTO *prometheus.GaugeVec
	// selected counts a template's pods, zero included: a template whose
	// selector matches no pod exports no per-pod series at all.
	selected *prometheus.GaugeVec

	mu       sync.Mutex
	exported map[types.NamespacedName][]prometheus.Labels
}

// podLabels name a template's pod, where it runs and why it is (not)
// protected, or (warmth) why not all its candidate nodes are warm.
var podLabels = []string{labelTemplateNamespace, labelTemplate, labelNamespace, labelPod, labelNode, labelReason}

const (
	labelReason            = "reason"
	labelTemplateNamespace = "template_namespace"
	labelTemplate          = "template"
	labelPod               = "pod"
)

func newProtectionMetrics() *protectionMetrics {
	return &protectionMetrics{
		protected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "pod_protected",
			Help: "1 if the s3gw pod would be moved off its node if that node failed now, else 0; reason says why not.",
		}, podLabels),
		expectedRTO: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "pod_expected_rto_seconds",
			Help: "Expected failure-to-serving time of a protected s3gw pod: node-monitor grace period, NodeHealthCheck duration, measured release time.",
		}, podLabels),
		selected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "template_selected_pods",
			Help: "s3gw pods the template's protection report covers; 0 means its selector matches no pod, so it protects nothing.",
		}, templateLabels),
		exported: map[types.NamespacedName][]prometheus.Labels{},
	}
}

// templateLabels name a template.
var templateLabels = []string{labelTemplateNamespace, labelTemplate}

func templateLabelValues(template types.NamespacedName) prometheus.Labels {
	return prometheus.Labels{labelTemplateNamespace: template.Namespace, labelTemplate: template.Name}
}

// SetProtection replaces the protection gauges of a template's pods.
func (r *Recorder) SetProtection(template types.NamespacedName, pods []PodProtection) {
	m := r.protection
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(template)
	exported := make([]prometheus.Labels, 0, len(pods))
	for _, p := range pods {
		l := prometheus.Labels{labelTemplateNamespace: template.Namespace, labelTemplate: template.Name,
			labelNamespace: p.Namespace, "pod": p.Pod, labelNode: p.Node, labelReason: p.Reason}
		value := 0.0
		if p.Protected {
			value = 1
			m.expectedRTO.With(l).Set(p.ExpectedRTO.Seconds())
		}
		m.protected.With(l).Set(value)
		exported = append(exported, l)
	}
	m.exported[template] = exported
	m.selected.With(templateLabelValues(template)).Set(float64(len(pods)))
}

// ForgetProtection drops the gauges of a deleted template.
func (r *Recorder) ForgetProtection(template types.NamespacedName) {
	m := r.protection
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(template)
}

func (m *protectionMetrics) forget(template types.NamespacedName) {
	for _, l := range m.exported[template] {
		m.protected.Delete(l)
		m.expectedRTO.Delete(l)
	}
	delete(m.exported, template)
	m.selected.Delete(templateLabelValues(template))
}
