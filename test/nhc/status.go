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

package nhc

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NHC's bookkeeping in status.unhealthyNodes
// (internal/controller/resources/status.go). The emulator keeps it in
// memory; the caller holds e.mu.

func (e *Emulator) statusNode(name string) *UnhealthyNode {
	for _, n := range e.unhealthy {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// markUnhealthy adds the node to status.unhealthyNodes.
func (e *Emulator) markUnhealthy(name string) {
	if e.statusNode(name) == nil {
		e.unhealthy = append(e.unhealthy, &UnhealthyNode{Name: name})
	}
}

// markHealthy removes the node from status.unhealthyNodes.
func (e *Emulator) markHealthy(name string) {
	for i, n := range e.unhealthy {
		if n.Name == name {
			e.unhealthy = append(e.unhealthy[:i], e.unhealthy[i+1:]...)
			return
		}
	}
}

// markConditionsHealthy records when the node's conditions turned healthy
// while it still had CRs (UpdateStatusNodeConditionsHealthy), and returns
// that time (nil for a node not in status).
func (e *Emulator) markConditionsHealthy(name string, now time.Time) *time.Time {
	n := e.statusNode(name)
	if n == nil {
		return nil
	}
	if n.ConditionsHealthy == nil {
		n.ConditionsHealthy = &now
	}
	return n.ConditionsHealthy
}

// markStarted records the CR as started at its creationTimestamp, or, for
// a CR this pass created, at the emulator's clock (the same instant in NHC,
// where both are real time). As NHC's
// UpdateStatusRemediationStarted does, it adds nothing when the node already
// has a remediation of the same kind, whatever its template: a second step
// of one kind is never recorded, so NHC cannot time it out (see
// startedRemediation).
func (e *Emulator) markStarted(node string, cr *unstructured.Unstructured, created bool) {
	e.markUnhealthy(node)
	started := cr.GetCreationTimestamp().Time
	if created {
		started = e.Clock.Now()
	}
	n := e.statusNode(node)
	for _, r := range n.Remediations {
		if r.GVK == cr.GroupVersionKind() {
			return
		}
	}
	n.Remediations = append(n.Remediations, &Remediation{
		GVK: cr.GroupVersionKind(), Namespace: cr.GetNamespace(), Name: cr.GetName(), UID: cr.GetUID(),
		Started: started, TemplateName: cr.GetAnnotations()[TemplateNameAnnotation],
	})
}

// startedRemediation is NHC's FindStatusRemediation for the current step:
// same kind, and the step's template or none recorded.
func (e *Emulator) startedRemediation(node string, gvk schema.GroupVersionKind, template string) *Remediation {
	n := e.statusNode(node)
	if n == nil {
		return nil
	}
	for _, r := range n.Remediations {
		if r.GVK == gvk && (r.TemplateName == "" || r.TemplateName == template) {
			return r
		}
	}
	return nil
}

// timedOutStep reports whether status records the step as timed out.
func (e *Emulator) timedOutStep(node string, step TemplateRef) bool {
	n := e.statusNode(node)
	if n == nil {
		return false
	}
	for _, r := range n.Remediations {
		if r.GVK == step.RemediationGVK() && r.TimedOut != nil && (r.TemplateName == "" || r.TemplateName == step.Name) {
			return true
		}
	}
	return false
}
