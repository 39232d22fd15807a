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
	"github.com/medik8s/common/pkg/labels"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// What wakes NHC: node events through its predicates
// (nodehealthcheck_controller.go SetupWithManager, shared.go
// nodeUpdateNeedsReconcile), and update and delete events of the templates'
// and remediation CRs' kinds it watches once it uses them
// (internal/controller/resources/watch.go; utils/mapper.go maps a template
// to the NodeHealthChecks referencing its kind and name, a CR to the
// NodeHealthCheck owning it).

// NodeHealthCheckObject is an empty NodeHealthCheck, for watches: NHC
// reconciles one when it is created or its spec changes (For with
// GenerationChangedPredicate).
func NodeHealthCheckObject() *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(NodeHealthCheckGVK)
	return obj
}

// WatchedKinds are the template kinds and remediation kinds this
// NodeHealthCheck uses.
func (e *Emulator) WatchedKinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	seen := map[schema.GroupVersionKind]bool{}
	for _, t := range e.templates() {
		for _, gvk := range []schema.GroupVersionKind{t.GVK(), t.RemediationGVK()} {
			if !seen[gvk] {
				seen[gvk] = true
				out = append(out, gvk)
			}
		}
	}
	return out
}

// WokenBy reports whether an event of obj, of one of WatchedKinds, wakes
// this NodeHealthCheck: a template it references (matched on kind and name
// only, as NHC's mapper does), or a CR it owns.
func (e *Emulator) WokenBy(obj client.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	for _, t := range e.templates() {
		if u.GetKind() == t.Kind && u.GetName() == t.Name {
			return true
		}
	}
	return e.owns(u)
}

// UpdatesAndDeletes is the predicate of NHC's template and CR watches.
var UpdatesAndDeletes = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// NodePredicate is the predicate of NHC's node watch: no create events;
// updates that change the exclude label, a label some NodeHealthCheck
// selects on, a condition's status or the manually-confirmed-healthy
// annotation; every delete.
func NodePredicate(selectors func() []metav1.LabelSelector) predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		UpdateFunc: func(ev event.UpdateEvent) bool {
			oldNode, okOld := ev.ObjectOld.(*corev1.Node)
			newNode, okNew := ev.ObjectNew.(*corev1.Node)
			return okOld && okNew && NodeUpdateNeedsReconcile(oldNode, newNode, selectors())
		},
	}
}

// NodeUpdateNeedsReconcile is nodeUpdateNeedsReconcile.
func NodeUpdateNeedsReconcile(oldNode, newNode *corev1.Node, selectors []metav1.LabelSelector) bool {
	return labelsNeedReconcile(oldNode.Labels, newNode.Labels, selectors) ||
		conditionsNeedReconcile(oldNode.Status.Conditions, newNode.Status.Conditions) ||
		annotationChanged(oldNode.Annotations, newNode.Annotations, ManuallyConfirmedHealthyAnnotation)
}

func labelsNeedReconcile(oldLabels, newLabels map[string]string, selectors []metav1.LabelSelector) bool {
	changed := func(key string) bool {
		oldValue, inOld := oldLabels[key]
		newValue, inNew := newLabels[key]
		return inOld != inNew || oldValue != newValue
	}
	if changed(labels.ExcludeFromRemediation) {
		return true
	}
	for _, s := range selectors {
		for key := range s.MatchLabels {
			if changed(key) {
				return true
			}
		}
		for _, expr := range s.MatchExpressions {
			if changed(expr.Key) {
				return true
			}
		}
	}
	return false
}

// conditionsNeedReconcile: a node without a Ready condition yet is not
// interesting; otherwise any condition added, removed or changing status.
func conditionsNeedReconcile(oldConds, newConds []corev1.NodeCondition) bool {
	ready := false
	for _, c := range newConds {
		ready = ready || c.Type == corev1.NodeReady
	}
	if !ready {
		return false
	}
	if len(oldConds) != len(newConds) {
		return true
	}
	for _, o := range oldConds {
		found := false
		for _, n := range newConds {
			if o.Type == n.Type {
				if o.Status != n.Status {
					return true
				}
				found = true
			}
		}
		if !found {
			return true
		}
	}
	return false
}

func annotationChanged(oldAnns, newAnns map[string]string, key string) bool {
	_, inOld := oldAnns[key]
	_, inNew := newAnns[key]
	return inOld != inNew
}
