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
	"context"
	"fmt"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	"github.com/medik8s/common/pkg/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// How NHC finds, reads, annotates and deletes remediation CRs
// (internal/controller/resources/manager.go).

// nodeOf is NHC's GetNodeNameFromCR: the node-name annotation, else the name.
func nodeOf(cr *unstructured.Unstructured) string {
	if n := cr.GetAnnotations()[annotations.NodeNameAnnotation]; n != "" {
		return n
	}
	return cr.GetName()
}

// matchesNodeTemplate is NHC's isMatchNodeTemplate: a CR without the
// template-name annotation is matched by its name alone, whoever created it.
func matchesNodeTemplate(cr *unstructured.Unstructured, node, template string) bool {
	name, ok := cr.GetAnnotations()[TemplateNameAnnotation]
	if !ok {
		return cr.GetName() == node
	}
	return name == template && cr.GetAnnotations()[annotations.NodeNameAnnotation] == node
}

// listKind lists every CR of the kind, in all namespaces.
func (e *Emulator) listKind(ctx context.Context, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	e.crLists.Add(1)
	if err := e.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	return list.Items, nil
}

// listCRs is NHC's ListRemediationCRs: for each template, the CRs of its kind
// cluster-wide that match the template (by annotation, or by name when they
// carry none), then filtered. A CR matching several templates is returned
// once.
func (e *Emulator) listCRs(ctx context.Context, keep func(*unstructured.Unstructured) bool) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	seen := map[types.UID]bool{}
	for _, t := range e.templates() {
		items, err := e.listKind(ctx, t.RemediationGVK())
		if err != nil {
			return nil, err
		}
		for i := range items {
			cr := &items[i]
			if seen[cr.GetUID()] || !matchesNodeTemplate(cr, nodeOf(cr), t.Name) || !keep(cr) {
				continue
			}
			seen[cr.GetUID()] = true
			out = append(out, *cr)
		}
	}
	return out, nil
}

// owns is NHC's IsOwner: an owner reference to this NodeHealthCheck by
// apiVersion, kind and name.
func (e *Emulator) owns(obj client.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == NodeHealthCheckGVK.Kind && ref.APIVersion == NodeHealthCheckGVK.GroupVersion().String() && ref.Name == e.Name {
			return true
		}
	}
	return false
}

// ForNode lists the CRs this NodeHealthCheck owns for the node, across its
// templates, matched by name or the node-name annotation, as NHC does.
func (e *Emulator) ForNode(ctx context.Context, node string) ([]unstructured.Unstructured, error) {
	return e.listCRs(ctx, func(cr *unstructured.Unstructured) bool {
		return (cr.GetName() == node || nodeOf(cr) == node) && e.owns(cr)
	})
}

// findCR is NHC's getCRWithNodeNameAnnotation: the CR of the generated CR's
// kind, anywhere in the cluster, that matches its node and template, or nil.
func (e *Emulator) findCR(ctx context.Context, generated *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	items, err := e.listKind(ctx, generated.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	ann := generated.GetAnnotations()
	for i := range items {
		if matchesNodeTemplate(&items[i], ann[annotations.NodeNameAnnotation], ann[TemplateNameAnnotation]) {
			return &items[i], nil
		}
	}
	return nil, nil
}

// deleteCR is NHC's DeleteRemediationCR: a plain Delete of a CR this
// NodeHealthCheck owns and that is not already being deleted; finalizers are
// the operator's.
func (e *Emulator) deleteCR(ctx context.Context, cr *unstructured.Unstructured) error {
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(cr), cr); err != nil {
		return client.IgnoreNotFound(err)
	}
	if cr.GetDeletionTimestamp() != nil || !e.owns(cr) {
		return nil
	}
	if err := e.Client.Delete(ctx, cr); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting remediation %s: %w", cr.GetName(), err)
	}
	e.record("Normal", "RemediationRemoved", "Deleted remediation CR of kind %s with name %s", cr.GetKind(), cr.GetName())
	return nil
}

// conditionStatus reads a condition as NHC's getCondition does: type and
// status only; "" when absent.
func conditionStatus(cr *unstructured.Unstructured, conditionType string) metav1.ConditionStatus {
	conds, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			s, _ := m["status"].(string)
			return metav1.ConditionStatus(s)
		}
	}
	return ""
}

// Succeeded reads what NHC reads: the Succeeded condition's status, or "".
func Succeeded(cr *unstructured.Unstructured) metav1.ConditionStatus {
	return conditionStatus(cr, conditions.SucceededType)
}

// annotateTimedOut is NHC's addTimeOutAnnotation: a full Update of the CR as
// NHC last read it, so a conflict surfaces as in NHC. The caller skips it
// while Succeeded=True.
func (e *Emulator) annotateTimedOut(ctx context.Context, cr *unstructured.Unstructured, now time.Time) error {
	ann := cr.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotations.NhcTimedOut] = now.UTC().Format(time.RFC3339)
	cr.SetAnnotations(ann)
	if err := e.Client.Update(ctx, cr); err != nil {
		return fmt.Errorf("marking remediation %s timed out: %w", cr.GetName(), err)
	}
	return nil
}

// TimeOut adds the nhc-timed-out annotation to a fresh read of the CR. It
// refuses, as NHC does, while Succeeded=True.
func (e *Emulator) TimeOut(ctx context.Context, cr *unstructured.Unstructured) error {
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(cr), cr); err != nil {
		return fmt.Errorf("getting remediation %s: %w", cr.GetName(), err)
	}
	if Succeeded(cr) == metav1.ConditionTrue {
		return nil
	}
	return e.annotateTimedOut(ctx, cr, e.Clock.Now())
}

// LeaseOverdue reports whether classic-mode NHC would time the node's CR
// out now: acquireTime + 3 × timeout has passed.
func (e *Emulator) LeaseOverdue(ctx context.Context, node string) (bool, error) {
	lease, err := e.Lease(ctx, node)
	if err != nil || lease.Spec.AcquireTime == nil {
		return false, client.IgnoreNotFound(err)
	}
	return e.Clock.Since(lease.Spec.AcquireTime.Time) > (maxTimesToExtendLease+1)*e.timeout(), nil
}
