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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
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
			NewWithT(t).Expect(Candidates(pod, pointers(nodes))).To(Equal(tt.want))
		})
	}
}

// upstreamAdmits is Candidates' question answered by the scheduler's own
// helpers, as Candidates asked them before the placement was compiled.
func upstreamAdmits(pod *corev1.Pod, node *corev1.Node) bool {
	if node.Name == pod.Spec.NodeName || !ready(node) {
		return false
	}
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); err != nil || !ok {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false)
	return !untolerated
}

// The compiled placement admits exactly the nodes the scheduler's helpers
// do, over every combination of node selector, required node affinity
// (each operator, on labels and on fields, valid or not) and tolerations,
// and of node names, labels, taints and readiness.
func TestPlacementAnswersAsTheScheduler(t *testing.T) {
	req := func(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	exprs := func(rs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: rs}
	}
	fieldsTerm := func(rs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchFields: rs}
	}
	terms := map[string][]corev1.NodeSelectorTerm{
		"no terms":              {},
		"an empty term":         {{}},
		"In":                    {exprs(req("zone", corev1.NodeSelectorOpIn, "a", "c"))},
		"NotIn":                 {exprs(req("zone", corev1.NodeSelectorOpNotIn, "a"))},
		"Exists":                {exprs(req("pool", corev1.NodeSelectorOpExists))},
		"DoesNotExist":          {exprs(req("pool", corev1.NodeSelectorOpDoesNotExist))},
		"Gt":                    {exprs(req("rank", corev1.NodeSelectorOpGt, "10"))},
		"Lt":                    {exprs(req("rank", corev1.NodeSelectorOpLt, "10"))},
		"Gt, not a number":      {exprs(req("rank", corev1.NodeSelectorOpGt, "ten"))},
		"Gt, two values":        {exprs(req("rank", corev1.NodeSelectorOpGt, "1", "2"))},
		"In, no value":          {exprs(req("zone", corev1.NodeSelectorOpIn))},
		"Exists with a value":   {exprs(req("pool", corev1.NodeSelectorOpExists, "s3gw"))},
		"an unknown operator":   {exprs(req("zone", "Near", "a"))},
		"an invalid label key":  {exprs(req("not a key!", corev1.NodeSelectorOpExists))},
		"two requirements":      {exprs(req("pool", corev1.NodeSelectorOpIn, "s3gw"), req("zone", corev1.NodeSelectorOpNotIn, "b"))},
		"the name In":           {fieldsTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node-a"))},
		"the name NotIn":        {fieldsTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpNotIn, "node-b"))},
		"the name In two":       {fieldsTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node-a", "node-b"))},
		"the name Exists":       {fieldsTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpExists))},
		"another field In":      {fieldsTerm(req("spec.unschedulable", corev1.NodeSelectorOpIn, "true"))},
		"another field In \"\"": {fieldsTerm(req("spec.unschedulable", corev1.NodeSelectorOpIn, ""))},
		"another field NotIn":   {fieldsTerm(req("spec.unschedulable", corev1.NodeSelectorOpNotIn, "true"))},
		"labels and the name": {{MatchExpressions: []corev1.NodeSelectorRequirement{req("pool", corev1.NodeSelectorOpExists)},
			MatchFields: []corev1.NodeSelectorRequirement{req(metav1.ObjectNameField, corev1.NodeSelectorOpNotIn, "node-a")}}},
		"two terms, one invalid": {exprs(req("rank", corev1.NodeSelectorOpGt, "ten")), exprs(req("zone", corev1.NodeSelectorOpIn, "b"))},
		"two terms":              {exprs(req("zone", corev1.NodeSelectorOpIn, "a")), fieldsTerm(req(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "node-c"))},
	}
	selectors := []map[string]string{nil, {"pool": "s3gw"}, {"pool": "s3gw", "zone": "a"}, {"zone": ""}}
	tolerations := [][]corev1.Toleration{
		nil,
		{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "s3gw", Effect: corev1.TaintEffectNoSchedule}},
		{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}},
		{{Operator: corev1.TolerationOpExists}},
		{{Key: "rank", Operator: corev1.TolerationOpGt, Value: "1"}},
	}
	taints := [][]corev1.Taint{
		nil,
		{{Key: "dedicated", Value: "s3gw", Effect: corev1.TaintEffectNoSchedule}},
		{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}},
		{{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}},
		{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}, {Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}},
		{{Key: "rank", Value: "5", Effect: corev1.TaintEffectNoSchedule}},
	}
	nodeLabels := []map[string]string{nil, {"pool": "s3gw", "zone": "a", "rank": "5"}, {"pool": "s3gw", "zone": "b", "rank": "12"},
		{"zone": "c", "rank": "x"}, {"zone": ""}}
	names := []string{"node-a", "node-b", "node-c", ""}
	nodes := make([]corev1.Node, 0, len(names)*len(nodeLabels)*len(taints)*2)
	for _, name := range names {
		for _, ls := range nodeLabels {
			for _, ts := range taints {
				for _, isReady := range []bool{true, false} {
					n := node(name, isReady, nil, ts...)
					n.Labels = ls
					nodes = append(nodes, n)
				}
			}
		}
	}
	affinities := map[string]*corev1.Affinity{"none": nil, "no node affinity": {}, "preferred only": {NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: exprs(req("zone", corev1.NodeSelectorOpIn, "a"))}}}}}
	for name, ts := range terms {
		affinities[name] = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: ts}}}
	}
	admitted := 0
	for name, affinity := range affinities {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			for _, sel := range selectors {
				for _, tols := range tolerations {
					pod := gatewayPod("gw", "node-a", 0)
					pod.Spec.NodeSelector, pod.Spec.Affinity, pod.Spec.Tolerations = sel, affinity, tols
					p := placementOf(pod)
					for i := range nodes {
						n := &nodes[i]
						want := upstreamAdmits(pod, n)
						g.Expect(p.admits(n)).To(Equal(want), "node %q labels %v taints %v ready %v; node selector %v, tolerations %v",
							n.Name, n.Labels, n.Spec.Taints, ready(n), sel, tols)
						if want {
							admitted++
						}
					}
				}
			}
		})
	}
	NewWithT(t).Expect(admitted).To(BeNumerically(">", 100), "the matrix admits nodes too, not only refuses them")
}

// Matching a node allocates nothing: the report matches every gateway
// against every node on every pass.
func TestPlacementMatchesWithoutAllocating(t *testing.T) {
	pod := gatewayPod("gw", "node-a", 0)
	pod.Spec.NodeSelector = map[string]string{"pool": "s3gw"}
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-a", "node-b"}}},
			MatchFields:      []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-c"}}},
		}}}}}
	pod.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists}}
	unreachable := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	candidate := node("node-b", true, map[string]string{"pool": "s3gw"}, unreachable)
	p := placementOf(pod)
	g := NewWithT(t)
	g.Expect(p.admits(&candidate)).To(BeTrue())
	g.Expect(testing.AllocsPerRun(100, func() { p.admits(&candidate) })).To(BeZero())
}

// pointers is what the protection report passes: the cache's own nodes.
func pointers(nodes []corev1.Node) []*corev1.Node {
	out := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		out[i] = &nodes[i]
	}
	return out
}
