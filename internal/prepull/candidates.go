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
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// Candidates are the nodes, sorted by name, that the pod's replacement may
// be scheduled to if the pod's node failed now: Ready, other than the
// pod's node, matching its node selector and required node affinity (as
// the scheduler matches them), and tolerating every NoSchedule and
// NoExecute taint (a cordoned node carries node.kubernetes.io/unschedulable).
// Pod affinity, topology spread and free capacity are left out: they
// change with every pod, and the DaemonSet cannot follow them.
//
// The protection report asks for every gateway on every pass, over every
// node: the pod's placement is compiled once, and matching a node
// allocates nothing.
func Candidates(pod *corev1.Pod, nodes []*corev1.Node) []string {
	p := placementOf(pod)
	var out []string
	for _, node := range nodes {
		if p.admits(node) {
			out = append(out, node.Name)
		}
	}
	slices.Sort(out)
	return out
}

// placement is a pod's required placement, compiled: what
// nodeaffinity.GetRequiredNodeAffinity(pod).Match and
// corev1helpers.FindMatchingUntoleratedTaint decide, without the node
// fields set and the filtered taints those build for every node
// (TestPlacementAnswersAsTheScheduler holds it to the same answers).
type placement struct {
	// node is the pod's own node, never a candidate.
	node string
	// selector is spec.nodeSelector; nil without one.
	selector labels.Selector
	// required is true when the pod has a required node affinity: one of
	// terms must match. A term that does not parse, or is empty, matches
	// no node (the scheduler reports its error only when no other term
	// matches, and a node it errs on is no candidate), so it is left out.
	required bool
	terms    []placementTerm
	// tolerations are the pod's.
	tolerations []corev1.Toleration
}

// placementTerm is one node selector term: its label requirements and its
// field requirements, all of which must match.
type placementTerm struct {
	// labels are matchExpressions; nil without any.
	labels labels.Selector
	// fields are matchFields: In or NotIn one value.
	fields []fieldRequirement
}

// fieldRequirement is a node field that must (equal) or must not equal value.
type fieldRequirement struct {
	key, value string
	equal      bool
}

func placementOf(pod *corev1.Pod) placement {
	p := placement{node: pod.Spec.NodeName, tolerations: pod.Spec.Tolerations}
	if len(pod.Spec.NodeSelector) > 0 {
		p.selector = labels.SelectorFromSet(pod.Spec.NodeSelector)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		p.required = true
		for i := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			if t, ok := compileTerm(&a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[i]); ok {
				p.terms = append(p.terms, t)
			}
		}
	}
	return p
}

// labelOperators are the node selector operators on labels, as label
// selector operators.
var labelOperators = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
	corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan,
}

// compileTerm compiles a term; false when it is empty or does not parse.
// Label requirements are the label selector's (labels.NewRequirement
// validates them as the scheduler does); a field requirement is In or
// NotIn exactly one value.
func compileTerm(term *corev1.NodeSelectorTerm) (placementTerm, bool) {
	var t placementTerm
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return t, false
	}
	if len(term.MatchExpressions) > 0 {
		t.labels = labels.NewSelector()
		for _, e := range term.MatchExpressions {
			op, known := labelOperators[e.Operator]
			if !known {
				return t, false
			}
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil {
				return t, false
			}
			t.labels = t.labels.Add(*r)
		}
	}
	for _, f := range term.MatchFields {
		if (f.Operator != corev1.NodeSelectorOpIn && f.Operator != corev1.NodeSelectorOpNotIn) || len(f.Values) != 1 {
			return t, false
		}
		t.fields = append(t.fields, fieldRequirement{key: f.Key, value: f.Values[0], equal: f.Operator == corev1.NodeSelectorOpIn})
	}
	return t, true
}

// admits reports whether node is a candidate.
func (p *placement) admits(node *corev1.Node) bool {
	if node.Name == p.node || !ready(node) {
		return false
	}
	if p.selector != nil && !p.selector.Matches(labels.Set(node.Labels)) {
		return false
	}
	if p.required && !p.anyTermMatches(node) {
		return false
	}
	return tolerated(node.Spec.Taints, p.tolerations)
}

func (p *placement) anyTermMatches(node *corev1.Node) bool {
	for i := range p.terms {
		if p.terms[i].matches(node) {
			return true
		}
	}
	return false
}

func (t *placementTerm) matches(node *corev1.Node) bool {
	if t.labels != nil && !t.labels.Matches(labels.Set(node.Labels)) {
		return false
	}
	// A node's only field is its name: a node without one (never stored)
	// has none, and the scheduler then skips the field requirements.
	if node.Name == "" {
		return true
	}
	for _, f := range t.fields {
		if (nodeField(node, f.key) == f.value) != f.equal {
			return false
		}
	}
	return true
}

// nodeField is a node's field as a node selector reads it: only
// metadata.name is set.
func nodeField(node *corev1.Node, key string) string {
	if key == metav1.ObjectNameField {
		return node.Name
	}
	return ""
}

// tolerated reports whether the tolerations tolerate every taint that
// keeps a new pod off a node: NoSchedule and NoExecute.
func tolerated(taints []corev1.Taint, tolerations []corev1.Toleration) bool {
	for i := range taints {
		t := &taints[i]
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) &&
			!corev1helpers.TolerationsTolerateTaint(klog.Background(), tolerations, t, false) {
			return false
		}
	}
	return true
}

func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
