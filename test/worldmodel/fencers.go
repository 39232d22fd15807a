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
	"fmt"
	"slices"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FenceAgentsRemediation (medik8s-remediation-contract.md §3.2): it runs
// its agent out of band (the BMC reaches a partitioned node), then reports
// FenceAgentActionSucceeded=True, then deletes the node's pods or adds the
// out-of-service taint, and undoes its taints when the CR is deleted. Its
// conditions' lastTransitionTime and its taint's timeAdded come from its
// own clock.
const (
	farFinalizer          = "fence-agents-remediation.medik8s.io/far-finalizer"
	farTaintKey           = "remediation.medik8s.io/fence-agents-remediation"
	farCondition          = "FenceAgentActionSucceeded"
	farMaxAttempts        = 3
	farStrategyOutOfServe = "OutOfServiceTaint"
)

// farJob is the agent run of one CR.
type farJob struct {
	at       time.Time
	attempts int
}

func (w *World) fenceAgents() {
	if !w.sc.FAR.Installed {
		return
	}
	for _, obj := range w.api.list(gvkFAR) {
		cr := obj.(*unstructured.Unstructured)
		node := crNodeName(cr)
		switch {
		case w.api.node(node) == nil:
			w.farNodeNotFound(cr)
		case cr.GetDeletionTimestamp() != nil:
			w.farCleanup(cr, node)
		case !slices.Contains(cr.GetFinalizers(), farFinalizer):
			w.farStart(cr, node)
		default:
			w.farProgress(cr, node)
		}
	}
}

// farNodeNotFound is FAR's reconcile of a CR whose node is missing
// (fence-agents-remediation controllers/fenceagentsremediation_controller.go,
// Reconcile, before any other step, deletion included; pkg/utils/
// conditions.go, UpdateConditions, RemediationFinishedNodeNotFound):
// Processing, FenceAgentActionSucceeded and Succeeded go False, a success
// already reported included, and nothing else happens: a deleted CR keeps
// its finalizer until a Node of that name exists again.
func (w *World) farNodeNotFound(cr *unstructured.Unstructured) {
	changed := false
	for _, c := range []string{"Processing", farCondition, "Succeeded"} {
		if conditionStatus(cr, c) != metav1.ConditionFalse {
			setUnstructuredCondition(cr, c, statusFalse, w.farClock())
			changed = true
		}
	}
	if changed {
		w.api.touch(cr)
		w.tracef("far", "%s: its node %s is not found", cr.GetName(), crNodeName(cr))
	}
}

func crNodeName(obj metav1.Object) string {
	if n := obj.GetAnnotations()[annotations.NodeNameAnnotation]; n != "" {
		return n
	}
	return obj.GetName()
}

func (w *World) farStart(cr *unstructured.Unstructured, node string) {
	cr.SetFinalizers(append(cr.GetFinalizers(), farFinalizer))
	if unstructuredCondition(cr, farCondition) == nil {
		setUnstructuredCondition(cr, "Processing", statusTrue, w.farClock())
		setUnstructuredCondition(cr, farCondition, "Unknown", w.farClock())
		setUnstructuredCondition(cr, "Succeeded", "Unknown", w.farClock())
		w.far[cr.GetUID()] = &farJob{at: w.now.Add(w.sc.FAR.Delay)}
		w.wakeAt(w.now.Add(w.sc.FAR.Delay))
	}
	w.api.touch(cr)
	if n := w.api.node(node); n != nil {
		w.addTaint(n, corev1.Taint{Key: farTaintKey, Effect: corev1.TaintEffectNoSchedule}, "FAR")
	}
	w.tracef("far", "%s started for %s", cr.GetName(), node)
}

func (w *World) farProgress(cr *unstructured.Unstructured, node string) {
	job := w.far[cr.GetUID()]
	if job == nil || conditionStatus(cr, "Processing") != metav1.ConditionTrue {
		return
	}
	if conditionStatus(cr, farCondition) != metav1.ConditionTrue {
		if w.now.Before(job.at) {
			w.wakeAt(job.at)
			return
		}
		w.farRunAgent(cr, node, job)
		return
	}
	w.farRecover(cr, node)
}

func (w *World) farRunAgent(cr *unstructured.Unstructured, node string, job *farJob) {
	job.attempts++
	fails := w.rnd.Float64() < w.sc.FAR.FailRate
	if coupled(w.coupling, fmt.Sprintf("far %s attempt %d", node, job.attempts), fails, func(bool) bool { return true }) {
		if job.attempts >= farMaxAttempts {
			setUnstructuredCondition(cr, farCondition, statusFalse, w.farClock())
			setUnstructuredCondition(cr, "Succeeded", statusFalse, w.farClock())
			setUnstructuredCondition(cr, "Processing", statusFalse, w.farClock())
			w.api.touch(cr)
			w.tracef("far", "%s: fence agent failed for %s", cr.GetName(), node)
			return
		}
		job.at = w.now.Add(w.sc.FAR.Delay)
		w.wakeAt(job.at)
		return
	}
	var boot time.Duration
	if w.sc.FAR.Action == "reboot" {
		boot = w.sc.FAR.BootTime
	}
	if w.stats.delegates[cr.GetName()] {
		w.fencedByDelegate(node)
	}
	w.fenceOff(w.nodeByName(node), "FAR "+w.sc.FAR.Action, boot)
	setUnstructuredCondition(cr, farCondition, statusTrue, w.farClock())
	w.api.touch(cr)
}

// fenceOff powers n off as a fencer's agent does; a reboot (boot > 0)
// brings it back after boot unless a fault keeps it off.
func (w *World) fenceOff(n *Node, by string, boot time.Duration) {
	w.powerOff(n, by)
	n.fencedOff = true
	if boot > 0 {
		w.schedule(boot, "boot after "+by+" of "+n.Name, func() {
			n.fencedOff = false
			w.applyFaults()
		})
	}
}

// dropFinalizer removes a fencer's finalizer from its CR.
func (w *World) dropFinalizer(cr *unstructured.Unstructured, finalizer string) {
	cr.SetFinalizers(slices.DeleteFunc(cr.GetFinalizers(), func(f string) bool { return f == finalizer }))
	w.api.touch(cr)
}

// farRecover applies the remediation strategy once fenced; it does not
// wait for pods or attachments to go.
func (w *World) farRecover(cr *unstructured.Unstructured, node string) {
	if n := w.api.node(node); n != nil {
		if w.sc.FAR.Strategy == farStrategyOutOfServe {
			w.addTaint(n, withTimeAdded(outOfServiceTaint(), apiTime(w.farClock())), "FAR")
		} else {
			for _, p := range w.api.pods() {
				if p.Spec.NodeName == node {
					w.tracef("far", "deletes pod %s", p.Name)
					deletePod(w.api, p, new(int64))
				}
			}
		}
	}
	setUnstructuredCondition(cr, "Succeeded", statusTrue, w.farClock())
	setUnstructuredCondition(cr, "Processing", statusFalse, w.farClock())
	w.api.touch(cr)
	w.tracef("far", "%s: remediation of %s finished (%s)", cr.GetName(), node, w.sc.FAR.Strategy)
}

// farCleanup removes the out-of-service taint (when its strategy adds
// one) and its NoSchedule taint, then its finalizer.
func (w *World) farCleanup(cr *unstructured.Unstructured, node string) {
	if !slices.Contains(cr.GetFinalizers(), farFinalizer) {
		return
	}
	if n := w.api.node(node); n != nil {
		if w.sc.FAR.Strategy == farStrategyOutOfServe {
			w.removeTaint(n, corev1.TaintNodeOutOfService)
		}
		w.removeTaint(n, farTaintKey)
	}
	w.dropFinalizer(cr, farFinalizer)
	delete(w.far, cr.GetUID())
	w.tracef("far", "%s deleted", cr.GetName())
}

// admin adds the out-of-service taint to a node after confirming it is
// powered off (sometimes without timeAdded), and removes it once the node
// has been Ready for a while, if they remember to.
type admin struct {
	offSince map[string]time.Time
	tainted  map[string]bool
}

func (w *World) adminActs() {
	if !w.sc.Admin.Taints {
		return
	}
	for _, n := range w.nodes {
		node := w.api.node(n.Name)
		switch {
		case node == nil:
			continue // nothing to taint until the Node is back
		case !n.Powered && !nodeReady(node):
			w.adminConfirmsOff(n, node)
		case n.Powered:
			delete(w.admin.offSince, n.Name)
			if w.admin.tainted[n.Name] && w.sc.Admin.Removes && nodeReady(node) {
				w.removeTaint(node, corev1.TaintNodeOutOfService)
				delete(w.admin.tainted, n.Name)
				w.tracef("admin", "removed the out-of-service taint from %s", n.Name)
			}
		}
	}
}

func (w *World) adminConfirmsOff(n *Node, node *corev1.Node) {
	since, ok := w.admin.offSince[n.Name]
	if !ok {
		w.admin.offSince[n.Name] = w.now
		w.wakeAt(w.now.Add(w.sc.Admin.After))
		return
	}
	if w.now.Before(since.Add(w.sc.Admin.After)) || outOfService(node) {
		return
	}
	taint := outOfServiceTaint()
	if w.sc.Admin.TimeAdded {
		taint = withTimeAdded(taint, apiTime(w.adminClock()))
	}
	w.addTaint(node, taint, "an admin")
	w.admin.tainted[n.Name] = true
	w.tracef("admin", "confirmed %s is off: added the out-of-service taint", n.Name)
}

// addTaint adds a taint unless one with its key and effect is there; who
// added an out-of-service taint is remembered.
func (w *World) addTaint(node *corev1.Node, taint corev1.Taint, by string) {
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&taint) {
			return
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, taint)
	if taint.Key == corev1.TaintNodeOutOfService {
		w.taintedBy[node.Name] = by
	}
	w.api.touch(node)
}

func (w *World) removeTaint(node *corev1.Node, key string) {
	kept := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return t.Key == key })
	if len(kept) != len(node.Spec.Taints) {
		node.Spec.Taints = kept
		if key == corev1.TaintNodeOutOfService {
			if w.taintedBy[node.Name] == operator {
				w.operatorTaintRemoved(node.Name)
			}
			delete(w.taintedBy, node.Name)
		}
		w.api.touch(node)
	}
}

func unstructuredCondition(obj *unstructured.Unstructured, condType string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(obj.Object, fieldStatus, "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			return m
		}
	}
	return nil
}

// setUnstructuredCondition sets a condition, moving lastTransitionTime only
// when the status changes.
func setUnstructuredCondition(obj *unstructured.Unstructured, condType, status string, now time.Time) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, fieldStatus, "conditions")
	ts := now.UTC().Format(time.RFC3339)
	for i, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == condType {
			if m[fieldStatus] != status {
				m[fieldStatus], m["lastTransitionTime"] = status, ts
			}
			conds[i] = m
			_ = unstructured.SetNestedSlice(obj.Object, conds, fieldStatus, "conditions")
			return
		}
	}
	conds = append(conds, map[string]any{"type": condType, fieldStatus: status, "lastTransitionTime": ts, "reason": condType})
	_ = unstructured.SetNestedSlice(obj.Object, conds, fieldStatus, "conditions")
}
