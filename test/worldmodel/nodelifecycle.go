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
// eviction and Pod GC, with their default timings (k8s.io/kubernetes
// v1.37.2, pkg/controller/nodelifecycle, pkg/controller/tainteviction,
// pkg/controller/podgc). They run on the control plane's clock.
const (
	nodeMonitorPeriod      = 5
	nodeMonitorGracePeriod = 50 * time.Second
	nodeStartupGracePeriod = time.Minute
	reasonNeverUpdated     = "NodeStatusNeverUpdated"
	podGCPeriod            = 20
)

// nodeHealth is what the node lifecycle controller remembers of a node
// (nodeHealthData): the heartbeat and Lease renewal it last saw, and when
// it saw either change, on its own clock.
type nodeHealth struct {
	heartbeat metav1.Time
	renew     time.Time
	probe     time.Time
}

// nodeLifecycle is tryUpdateNodeHealth: a node whose Ready
// lastHeartbeatTime changed, or whose Lease renewTime moved forward, was
// probed now; once not probed for the grace period it is marked Unknown,
// keeping the kubelet's heartbeat time. The kubelet's timestamps are
// compared with nothing but their previous values: its clock never counts.
// It keeps the not-ready/unreachable taints in line with Ready.
func (w *World) nodeLifecycle() {
	if !w.tick(nodeMonitorPeriod) {
		return
	}
	for _, n := range w.nodes {
		node := w.api.node(n.Name)
		if node == nil {
			continue // its memory of the name stays (nodeHealthMap)
		}
		ready := readyCondition(node)
		h := w.health[n.Name]
		if ready == nil {
			w.neverPosted(node, h)
			continue
		}
		if h == nil {
			h = &nodeHealth{heartbeat: ready.LastHeartbeatTime, probe: w.now}
			w.health[n.Name] = h
		}
		if !ready.LastHeartbeatTime.Equal(&h.heartbeat) {
			h.heartbeat, h.probe = ready.LastHeartbeatTime, w.now
		}
		w.leaseProbe(n.Name, h)
		if ready.Status != corev1.ConditionUnknown && w.now.After(h.probe.Add(nodeMonitorGracePeriod)) {
			ready.Status, ready.Reason = corev1.ConditionUnknown, "NodeStatusUnknown"
			ready.Message = "Kubelet stopped posting node status."
			ready.LastTransitionTime = apiTime(w.now)
			w.api.touch(node)
			w.tracef("kcm", "node %s Ready=Unknown", n.Name)
			w.markPodsNotReady(n.Name)
		}
		w.syncConditionTaints(node)
	}
}

// leaseProbe counts a Lease renewal later than the last one seen as a
// probe now.
func (w *World) leaseProbe(name string, h *nodeHealth) {
	if lease := w.api.lease(name); lease != nil && lease.Spec.RenewTime != nil && h.renew.Before(lease.Spec.RenewTime.Time) {
		h.renew, h.probe = lease.Spec.RenewTime.Time, w.now
	}
}

// neverPosted is tryUpdateNodeHealth for a Node without a Ready condition:
// its kubelet never posted status. A name the controller has no memory of
// was probed at the Node's creation; one it remembers (nodeHealthMap is
// keyed by name and never cleared, so a Node re-created under a name keeps
// the old Node's probe time) keeps its probe time. Once that is older than
// nodeStartupGracePeriod it writes Ready=Unknown, NodeStatusNeverUpdated,
// with the creation time as heartbeat; no pods are marked, as the Ready
// condition it observed was already (implicitly) Unknown. Condition
// taints wait for a Ready condition (processTaintBaseEviction runs only
// with one).
func (w *World) neverPosted(node *corev1.Node, h *nodeHealth) {
	if h == nil {
		h = &nodeHealth{heartbeat: node.CreationTimestamp, probe: node.CreationTimestamp.Time}
		w.health[node.Name] = h
	}
	w.leaseProbe(node.Name, h)
	if due := h.probe.Add(nodeStartupGracePeriod); !w.now.After(due) {
		w.wakeAt(due.Add(time.Second))
		return
	}
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady,
		Status: corev1.ConditionUnknown, Reason: reasonNeverUpdated, Message: "Kubelet never posted node status.",
		LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: apiTime(w.now)})
	h.heartbeat = node.CreationTimestamp
	w.api.touch(node)
	w.tracef("kcm", "node %s Ready=Unknown: kubelet never posted status", node.Name)
}

func (w *World) markPodsNotReady(node string) {
	for _, p := range w.api.pods() {
		if p.Spec.NodeName != node {
			continue
		}
		for i := range p.Status.Conditions {
			if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				c.Status, c.LastTransitionTime = corev1.ConditionFalse, apiTime(w.now)
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
		at := apiTime(w.now)
		kept = append(kept, corev1.Taint{Key: want, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &at},
			corev1.Taint{Key: want, Effect: corev1.TaintEffectNoExecute, TimeAdded: &at})
		changed = true
	}
	if changed {
		node.Spec.Taints = kept
		w.api.touch(node)
	}
}

// taintEviction is the taint eviction controller (processPodOnNode): a
// pod on a node with a NoExecute taint it does not tolerate is deleted
// (gracefully) at once; one it tolerates for a while is deleted that long
// after the controller first saw the node tainted, on its own clock (the
// taints' timeAdded is not read).
func (w *World) taintEviction() {
	for _, p := range w.api.pods() {
		if p.Spec.NodeName == "" || podTerminating(p) {
			delete(w.taintedSince, p.UID)
			continue
		}
		node := w.api.node(p.Spec.NodeName)
		if node == nil {
			delete(w.taintedSince, p.UID) // no Node, no taints to evict for; Pod GC takes the pod
			continue
		}
		tolerated, wait, tainted := evictionWait(p, node)
		switch {
		case !tainted:
			delete(w.taintedSince, p.UID)
			continue
		case tolerated && wait < 0:
			delete(w.taintedSince, p.UID)
			continue // tolerated forever
		case tolerated:
			since, ok := w.taintedSince[p.UID]
			if !ok {
				since = w.now
				w.taintedSince[p.UID] = since
			}
			if due := since.Add(wait); w.now.Before(due) {
				w.wakeAt(due)
				continue
			}
		}
		delete(w.taintedSince, p.UID)
		w.tracef("kcm", "taint eviction of pod %s on %s", p.Name, node.Name)
		deletePod(w.api, p, nil)
	}
}

// evictionWait is whether the node has NoExecute taints, whether the pod
// tolerates them all, and the shortest tolerationSeconds (-1: forever).
func evictionWait(p *corev1.Pod, node *corev1.Node) (tolerated bool, wait time.Duration, tainted bool) {
	tolerated, wait = true, -1
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tainted = true
		tol := tolerationFor(p, t)
		switch {
		case tol == nil:
			return false, 0, true
		case tol.TolerationSeconds != nil:
			if d := time.Duration(*tol.TolerationSeconds) * time.Second; wait < 0 || d < wait {
				wait = d
			}
		}
	}
	return tolerated, wait, tainted
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
// the out-of-service taint (any effect), and pods of a missing node
// (gcOrphaned), every 20 s.
func (w *World) podGC() {
	if !w.tick(podGCPeriod) {
		return
	}
	w.gcOrphaned()
	for _, p := range w.api.pods() {
		if !podTerminating(p) || p.Spec.NodeName == "" {
			continue
		}
		node := w.api.node(p.Spec.NodeName)
		if node != nil && !nodeReady(node) && outOfService(node) {
			w.tracef("kcm", "pod GC force-deletes %s on out-of-service node %s", p.Name, node.Name)
			deletePod(w.api, p, new(int64))
		}
	}
}
