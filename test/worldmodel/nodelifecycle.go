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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// kube-controller-manager's node lifecycle controller, taint-based
// eviction and Pod GC, with their default timings.
const (
	nodeMonitorPeriod      = 5
	nodeMonitorGracePeriod = 50 * time.Second
	podGCPeriod            = 20
)

// nodeLifecycle marks a node Unknown once neither its Lease nor its status
// was renewed for the grace period, keeping the kubelet's heartbeat time,
// and keeps the not-ready/unreachable taints in line with Ready.
func (w *World) nodeLifecycle() {
	if !w.tick(nodeMonitorPeriod) {
		return
	}
	for _, n := range w.nodes {
		node := w.api.node(n.Name)
		ready := readyCondition(node)
		probe := ready.LastHeartbeatTime.Time
		if renew := w.api.lease(n.Name).Spec.RenewTime; renew != nil && renew.After(probe) {
			probe = renew.Time
		}
		if ready.Status != corev1.ConditionUnknown && w.now.Sub(probe) >= nodeMonitorGracePeriod {
			ready.Status, ready.Reason = corev1.ConditionUnknown, "NodeStatusUnknown"
			ready.Message = "Kubelet stopped posting node status."
			ready.LastTransitionTime = metav1.NewTime(w.now)
			w.api.touch(node)
			w.tracef("kcm", "node %s Ready=Unknown", n.Name)
			w.markPodsNotReady(n.Name)
		}
		w.syncConditionTaints(node)
	}
}

func (w *World) markPodsNotReady(node string) {
	for _, p := range w.api.pods() {
		if p.Spec.NodeName != node {
			continue
		}
		for i := range p.Status.Conditions {
			if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				c.Status, c.LastTransitionTime = corev1.ConditionFalse, metav1.NewTime(w.now)
				w.api.touch(p)
			}
		}
	}
}

// syncConditionTaints adds node.kubernetes.io/unreachable (Unknown) or
// not-ready (False), NoSchedule and NoExecute, and removes them once Ready.
func (w *World) syncConditionTaints(node *corev1.Node) {
	want := ""
	switch readyCondition(node).Status {
	case corev1.ConditionUnknown:
		want = corev1.TaintNodeUnreachable
	case corev1.ConditionFalse:
		want = corev1.TaintNodeNotReady
	}
	var kept []corev1.Taint
	have := false
	for _, t := range node.Spec.Taints {
		switch t.Key {
		case want:
			have = true
		case corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady:
			continue
		}
		kept = append(kept, t)
	}
	changed := len(kept) != len(node.Spec.Taints)
	if want != "" && !have {
		at := metav1.NewTime(w.now)
		kept = append(kept, corev1.Taint{Key: want, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &at},
			corev1.Taint{Key: want, Effect: corev1.TaintEffectNoExecute, TimeAdded: &at})
		changed = true
	}
	if changed {
		node.Spec.Taints = kept
		w.api.touch(node)
	}
}

// taintEviction deletes (gracefully) pods on nodes with NoExecute taints
// they do not tolerate, at once or when their tolerationSeconds run out.
func (w *World) taintEviction() {
	for _, p := range w.api.pods() {
		if p.Spec.NodeName == "" || podTerminating(p) {
			continue
		}
		node := w.api.node(p.Spec.NodeName)
		if due, ok := w.evictionTime(p, node); ok {
			if w.now.Before(due) {
				w.wakeAt(due)
				continue
			}
			w.tracef("kcm", "taint eviction of pod %s on %s", p.Name, node.Name)
			deletePod(w.api, p, nil)
		}
	}
}

// evictionTime is when the taint manager evicts a pod, if at all.
func (w *World) evictionTime(p *corev1.Pod, node *corev1.Node) (time.Time, bool) {
	var due time.Time
	found := false
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		added := w.now
		if t.TimeAdded != nil {
			added = t.TimeAdded.Time
		}
		at := added
		if tol := tolerationFor(p, t); tol != nil {
			if tol.TolerationSeconds == nil {
				continue // tolerated forever
			}
			at = added.Add(time.Duration(*tol.TolerationSeconds) * time.Second)
		}
		if !found || at.Before(due) {
			due, found = at, true
		}
	}
	return due, found
}

func tolerationFor(p *corev1.Pod, t *corev1.Taint) *corev1.Toleration {
	for i := range p.Spec.Tolerations {
		if p.Spec.Tolerations[i].ToleratesTaint(klog.Background(), t, false) {
			return &p.Spec.Tolerations[i]
		}
	}
	return nil
}

// podGC force-deletes terminating pods on a not-Ready node that carries
// the out-of-service taint (any effect), every 20 s.
func (w *World) podGC() {
	if !w.tick(podGCPeriod) {
		return
	}
	for _, p := range w.api.pods() {
		if !podTerminating(p) || p.Spec.NodeName == "" {
			continue
		}
		node := w.api.node(p.Spec.NodeName)
		if !nodeReady(node) && outOfService(node) {
			w.tracef("kcm", "pod GC force-deletes %s on out-of-service node %s", p.Name, node.Name)
			deletePod(w.api, p, new(int64))
		}
	}
}
