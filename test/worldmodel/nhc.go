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

package worldmodel

import (
	"time"

	"github.com/medik8s/common/pkg/annotations"
	"github.com/medik8s/common/pkg/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// NodeHealthCheck (medik8s-remediation-contract.md §1, §8): it creates a
// remediation CR from a template once a node is not Ready for `duration`,
// escalates on timeout, marks timed-out CRs, and deletes its CRs when the
// node is Ready again (after healthyDelay), counting the node healthy only
// once they are gone.

const (
	nhcName                = "nhc-workers"
	templateNameAnnotation = "remediation.medik8s.io/template-name"
	nhcClassicTimeout      = 10 * time.Minute
	ourTemplateName        = "s3gw"
	farTemplateName        = "far"
)

type nhcStep struct {
	gvk      schema.GroupVersionKind // the remediation kind
	template string
	timeout  time.Duration
}

// nhcNode is NHC's status.unhealthyNodes entry for one node.
type nhcNode struct {
	acquired time.Time
	step     int
	started  time.Time
	created  bool
}

type healthCheck struct {
	uid   types.UID
	steps []nhcStep
	nodes map[string]*nhcNode
	// classic: one remediation, not escalatingRemediations.
	classic bool
}

func (w *World) newHealthCheck() *healthCheck {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvkNHC)
	obj.SetName(nhcName)
	w.api.create(obj)
	h := &healthCheck{uid: obj.GetUID(), nodes: map[string]*nhcNode{}}
	ours := nhcStep{gvk: gvkRemediation, template: ourTemplateName, timeout: w.sc.NHC.OurTimeout}
	snr := nhcStep{gvk: gvkSNR, template: snrTemplateName}
	if w.sc.SNR != nil {
		snr.timeout = w.sc.SNR.Timeout
	}
	if w.sc.SNR != nil && w.sc.SNR.First {
		h.steps = append(h.steps, snr)
	}
	if w.sc.NHC.Escalating {
		h.steps = append(h.steps, nhcStep{gvk: gvkFAR, template: farTemplateName, timeout: w.sc.NHC.FARTimeout})
	}
	h.steps = append(h.steps, ours)
	if w.sc.SNR != nil && !w.sc.SNR.First {
		h.steps = append(h.steps, snr)
	}
	h.classic = len(h.steps) == 1
	return h
}

func (w *World) healthChecks() {
	for _, n := range w.nodes {
		node := w.api.node(n.Name)
		crs := w.nhcOwned(n.Name)
		if node == nil {
			w.nhcOrphaned(n.Name, crs)
			continue
		}
		ready := readyCondition(node)
		switch {
		case ready == nil:
			// No unhealthy condition matches a condition the node lacks
			// (internal/controller/utils/conditions.go, isHealthy).
			w.nhcHealthy(n.Name, node.CreationTimestamp, crs)
			continue
		case ready.Status == corev1.ConditionTrue:
			w.nhcHealthy(n.Name, ready.LastTransitionTime, crs)
			continue
		}
		if due := ready.LastTransitionTime.Add(w.sc.NHC.Duration); w.now.Before(due) {
			w.wakeAt(due)
			continue
		}
		w.nhcUnhealthy(n.Name, crs)
	}
}

// nhcHealthy deletes the node's CRs once healthyDelay has passed since the
// node became healthy; the node is healthy only once they are gone.
func (w *World) nhcHealthy(node string, since metav1.Time, crs []client.Object) {
	if len(crs) == 0 {
		delete(w.nhc.nodes, node)
		return
	}
	if w.sc.NHC.NeverDelete {
		return
	}
	if due := since.Add(w.sc.NHC.HealthyDelay); w.now.Before(due) {
		w.wakeAt(due)
		return
	}
	for _, cr := range crs {
		if cr.GetDeletionTimestamp() == nil {
			w.tracef("nhc", "node %s healthy: deleting %s %s", node, cr.GetObjectKind().GroupVersionKind().Kind, cr.GetName())
			w.api.markDeleted(cr)
		}
	}
}

// nhcOrphaned deletes the CRs NHC owns for a deleted node at once and
// forgets the node (node-healthcheck-operator internal/controller/
// nodehealthcheck_controller.go, deleteOrphanedRemediationCRs, on the
// Node's delete event; no remediator here expects the node's deletion).
// healthyDelay does not apply.
func (w *World) nhcOrphaned(node string, crs []client.Object) {
	delete(w.nhc.nodes, node)
	for _, cr := range crs {
		if cr.GetDeletionTimestamp() == nil {
			w.tracef("nhc", "node %s deleted: deleting orphaned %s %s", node, cr.GetObjectKind().GroupVersionKind().Kind, cr.GetName())
			w.api.markDeleted(cr)
		}
	}
}

func (w *World) nhcUnhealthy(node string, crs []client.Object) {
	st := w.nhc.nodes[node]
	if st == nil {
		if !w.minHealthyAllows() {
			return
		}
		st = &nhcNode{acquired: w.now}
		w.nhc.nodes[node] = st
	}
	step := w.nhc.steps[st.step]
	cr := w.findStep(crs, step)
	if cr == nil {
		if !st.created {
			w.nhcCreate(node, step)
			st.created, st.started = true, w.now
		}
		return
	}
	succeeded := conditionStatus(cr, conditions.SucceededType)
	if succeeded == metav1.ConditionTrue {
		if w.escalates(st, step) {
			w.nhcNextStep(st)
		}
		return
	}
	deadline := st.started.Add(step.timeout)
	if w.nhc.classic {
		deadline = st.acquired.Add(3 * nhcClassicTimeout)
	}
	if w.now.Before(deadline) && succeeded != metav1.ConditionFalse {
		w.wakeAt(deadline)
		return
	}
	if _, done := cr.GetAnnotations()[annotations.NhcTimedOut]; !done {
		setAnnotation(cr, annotations.NhcTimedOut, w.now.UTC().Format(time.RFC3339))
		w.api.touch(cr)
		w.tracef("nhc", "%s %s timed out", step.gvk.Kind, cr.GetName())
	}
	if st.step+1 < len(w.nhc.steps) {
		w.nhcNextStep(st)
	}
}

// escalates: a succeeded step still hands over once its timeout expires.
func (w *World) escalates(st *nhcNode, step nhcStep) bool {
	if st.step+1 >= len(w.nhc.steps) {
		return false
	}
	if deadline := st.started.Add(step.timeout); w.now.Before(deadline) {
		w.wakeAt(deadline)
		return false
	}
	return true
}

func (w *World) nhcNextStep(st *nhcNode) {
	st.step++
	st.created = false
}

func (w *World) minHealthyAllows() bool {
	if w.sc.NHC.MinHealthyPercent == 0 {
		return true
	}
	healthy := 0
	for _, n := range w.nodes {
		if nodeReady(w.api.node(n.Name)) {
			healthy++
		}
	}
	return healthy*100 >= w.sc.NHC.MinHealthyPercent*len(w.nodes)
}

// nhcOwned are the CRs this NodeHealthCheck owns for the node, matched by
// the node-name annotation or the name.
func (w *World) nhcOwned(node string) []client.Object {
	var out []client.Object
	for _, step := range w.nhc.steps {
		for _, obj := range w.api.list(step.gvk) {
			if (obj.GetAnnotations()[annotations.NodeNameAnnotation] == node || obj.GetName() == node) && w.ownedByNHC(obj) {
				out = append(out, obj)
			}
		}
	}
	return out
}

func (w *World) ownedByNHC(obj client.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == gvkNHC.Kind && ref.UID == w.nhc.uid {
			return true
		}
	}
	return false
}

// findStep is the CR of one escalation step among a node's CRs.
func (w *World) findStep(crs []client.Object, step nhcStep) client.Object {
	for _, cr := range crs {
		if w.api.gvkOf(cr) == step.gvk && cr.GetAnnotations()[templateNameAnnotation] == step.template {
			return cr
		}
	}
	return nil
}

// nhcCreate builds the CR as NHC does: the template's namespace, named
// after the node (generateName with multi-template support), a copy of
// spec.template.spec, the two annotations, the part-of label and a
// non-controller owner reference to the NodeHealthCheck.
func (w *World) nhcCreate(node string, step nhcStep) {
	template := w.api.get(templateKind(step.gvk), remediationNamespace, step.template)
	tm, err := toMap(template)
	if err != nil {
		panic(err)
	}
	spec, _, _ := unstructured.NestedMap(tm, fieldSpec, "template", fieldSpec)
	cr := &unstructured.Unstructured{Object: map[string]any{fieldSpec: spec}}
	cr.SetGroupVersionKind(step.gvk)
	cr.SetNamespace(remediationNamespace)
	if _, multi := template.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]; multi {
		cr.SetGenerateName(node + "-")
	} else {
		cr.SetName(node)
		if w.api.get(step.gvk, remediationNamespace, node) != nil {
			return // AlreadyExists: retried on a later pass
		}
	}
	cr.SetAnnotations(map[string]string{annotations.NodeNameAnnotation: node, templateNameAnnotation: step.template})
	cr.SetLabels(map[string]string{"app.kubernetes.io/part-of": "node-healthcheck-controller"})
	cr.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: gvkNHC.GroupVersion().String(), Kind: gvkNHC.Kind,
		Name: nhcName, UID: w.nhc.uid, Controller: ptr.To(false)}})
	obj, err := admit(step.gvk, cr)
	if err != nil {
		panic(err)
	}
	w.api.create(obj)
	w.tracef("nhc", "node %s unhealthy: created %s %s", node, step.gvk.Kind, obj.GetName())
}

func templateKind(gvk schema.GroupVersionKind) schema.GroupVersionKind {
	return gvk.GroupVersion().WithKind(gvk.Kind + "Template")
}

// conditionStatus reads a condition of a typed or unstructured CR.
func conditionStatus(obj client.Object, condType string) metav1.ConditionStatus {
	if rem, ok := obj.(*s3gwv1alpha1.S3GWRemediation); ok {
		for _, c := range rem.Status.Conditions {
			if c.Type == condType {
				return c.Status
			}
		}
		return ""
	}
	c := unstructuredCondition(obj.(*unstructured.Unstructured), condType)
	if c == nil {
		return ""
	}
	status, _ := c[fieldStatus].(string)
	return metav1.ConditionStatus(status)
}

func setAnnotation(obj client.Object, key, value string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
}
