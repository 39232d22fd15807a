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

package prepull

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

func TestCandidates(t *testing.T) {
	pool := map[string]string{"pool": "s3gw"}
	cordoned := corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	dedicated := corev1.Taint{Key: "dedicated", Value: "s3gw", Effect: corev1.TaintEffectNoSchedule}
	preferNot := corev1.Taint{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}
	nodes := []corev1.Node{
		node("node-a", true, pool),            // the gateway's own
		node("node-c", true, pool),            // a candidate
		node("node-b", true, pool, preferNot), // a soft taint keeps nothing off
		node("node-d", false, pool),           // NotReady
		node("node-e", true, nil),             // outside the pool
		node("node-f", true, pool, cordoned),  // cordoned
		node("node-g", true, pool, dedicated), // dedicated to s3gw
	}
	tests := []struct {
		name   string
		change func(*corev1.Pod)
		want   []string
	}{
		{name: "no constraint: every Ready, untainted node but its own", change: func(*corev1.Pod) {},
			want: []string{"node-b", "node-c", "node-e"}},
		{name: "a node selector", change: func(p *corev1.Pod) { p.Spec.NodeSelector = pool },
			want: []string{"node-b", "node-c"}},
		{name: "required node affinity on hostnames, as the s3gw chart's nodeSelector", change: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-a", "node-c", "node-d", "node-g"}}}}}}}}
		}, want: []string{"node-c"}},
		{name: "required node affinity on the node's name", change: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
					Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-b"}}}}}}}}
		}, want: []string{"node-c", "node-e"}},
		{name: "a toleration opens the dedicated nodes", change: func(p *corev1.Pod) {
			p.Spec.NodeSelector = pool
			p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "s3gw", Effect: corev1.TaintEffectNoSchedule}}
		}, want: []string{"node-b", "node-c", "node-g"}},
		{name: "no node left", change: func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"pool": "gone"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := gatewayPod("gw", "node-a", 0)
			tt.change(pod)
			NewWithT(t).Expect(Candidates(pod, nodes)).To(Equal(tt.want))
		})
	}
}
