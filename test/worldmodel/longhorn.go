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
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// longhorn-manager (longhorn-and-node-failure.md §1, §5.1): it never
// fences. It reaches a node's processes only while the node is powered,
// connected to the control plane and not declared down; on detach from a
// down node it only records the engine stopped.

// ignoreKubeletNotReady is how long Longhorn ignores a Kubernetes Ready=False
// (issue #7302); Unknown counts at once.
const ignoreKubeletNotReady = 15 * time.Second

func longhornReady(n *longhorn.Node) *longhorn.Condition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == longhorn.NodeConditionReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// longhornDown is Longhorn's IsNodeDownOrDeleted.
func (w *World) longhornDown(node string) bool {
	c := longhornReady(w.api.longhornNode(node))
	return c.Status == statusFalse &&
		(c.Reason == longhorn.NodeReasonKubernetesNodeNotReady || c.Reason == longhorn.NodeReasonKubernetesNodeGone)
}

// longhornReaches is whether longhorn-manager can start and stop processes
// on the node.
func (w *World) longhornReaches(n *Node) bool {
	return n.Powered && n.CP && !w.longhornDown(n.Name)
}

// longhornNodes is Longhorn's node controller: Ready follows Kubernetes'
// Ready condition.
func (w *World) longhornNodes() {
	for _, n := range w.nodes {
		ready := readyCondition(w.api.node(n.Name))
		status, reason := statusTrue, ""
		switch ready.Status {
		case corev1.ConditionUnknown:
			status, reason = statusFalse, longhorn.NodeReasonKubernetesNodeNotReady
		case corev1.ConditionFalse:
			since := ready.LastTransitionTime.Add(ignoreKubeletNotReady)
			if w.now.Before(since) {
				w.wakeAt(since)
				continue
			}
			status, reason = statusFalse, longhorn.NodeReasonKubernetesNodeNotReady
		}
		lhn := w.api.longhornNode(n.Name)
		c := longhornReady(lhn)
		if c.Status != status || c.Reason != reason {
			c.Status, c.Reason, c.LastTransitionTime = status, reason, metav1.NewTime(w.now)
			w.api.touch(lhn)
			w.tracef("longhorn", "node %s Ready=%s %s", n.Name, status, reason)
		}
	}
}

// longhornVolumes runs the attachment, volume, engine and replica
// controllers for every volume.
func (w *World) longhornVolumes() {
	for _, v := range w.volumes {
		w.collectEngineReports(v)
		lv := w.api.longhornVolume(v.Name)
		if lv.Spec.NodeID != "" {
			if ticketNode(w.api.longhornAttachment(v.Name), lv.Spec.NodeID) {
				w.keepAttached(v, lv)
			} else {
				w.detach(v, lv)
			}
		}
		if lv.Spec.NodeID == "" {
			if target := w.ticketTarget(v); target != nil {
				w.attach(v, lv, target)
			}
		}
		w.rebuild(v)
		w.syncEngineStatus(v)
		w.syncReplicaStatus(v)
		w.syncTicketStatus(v, lv)
	}
}

func ticketNode(va *longhorn.VolumeAttachment, node string) bool {
	for _, t := range va.Spec.AttachmentTickets {
		if t.NodeID == node {
			return true
		}
	}
	return false
}

// ticketTarget is the node the attacher controller attaches a detached
// volume to: the smallest ticket ID of the highest priority (all CSI here).
func (w *World) ticketTarget(v *Volume) *Node {
	va := w.api.longhornAttachment(v.Name)
	ids := make([]string, 0, len(va.Spec.AttachmentTickets))
	for id := range va.Spec.AttachmentTickets {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	return w.nodeByName(va.Spec.AttachmentTickets[ids[0]].NodeID)
}

// collectEngineReports is what longhorn-manager learns from the engines it
// reaches: replicas the current engine dropped fail, and engine processes
// whose record is stopped are killed.
func (w *World) collectEngineReports(v *Volume) {
	if e := v.current; e != nil && w.longhornReaches(e.Node) {
		for _, r := range e.dropped {
			w.failReplica(r, "dropped by engine e"+itoa(e.Seq))
		}
		e.dropped = nil
	}
	for _, e := range v.Engines {
		if e != v.current && e.Running && w.longhornReaches(e.Node) {
			e.Running = false
			w.tracef("longhorn", "%s: stopped stale engine e%d on %s", v.Name, e.Seq, e.Node.Name)
		}
	}
	if v.current == nil {
		for _, r := range v.Replicas {
			if r.Running && w.longhornReaches(r.Node) {
				r.Running = false
			}
		}
	}
}

func (w *World) failReplica(r *Replica, why string) {
	cr := w.api.longhornReplica(r.Name)
	if cr.Spec.FailedAt != "" {
		return
	}
	cr.Spec.FailedAt = w.now.Format(time.RFC3339)
	w.api.touch(cr)
	w.tracef("longhorn", "replica %s on %s failed: %s", r.Name, r.Node.Name, why)
}

// detach clears the volume's node once no ticket wants it there. A down
// node is not contacted (its engine is only recorded stopped); a node that
// is unreachable but not yet down keeps the volume detaching.
func (w *World) detach(v *Volume, lv *longhorn.Volume) {
	old := w.nodeByName(lv.Spec.NodeID)
	switch {
	case w.longhornDown(old.Name):
	case w.longhornReaches(old):
		if v.current != nil {
			v.current.Running = false
		}
	default:
		if lv.Status.State != "detaching" {
			lv.Status.State = "detaching"
			w.api.touch(lv)
		}
		return
	}
	for _, r := range v.Replicas {
		if r.Running && w.longhornReaches(r.Node) {
			r.Running = false
		}
	}
	v.current = nil
	lv.Spec.NodeID, lv.Status.State, lv.Status.CurrentNodeID = "", "detached", ""
	w.api.touch(lv)
	ecr := w.api.longhornEngine(v.Name + "-e-0")
	ecr.Spec.NodeID, ecr.Spec.DesireState, ecr.Status.CurrentState = "", stateStopped, stateStopped
	w.api.touch(ecr)
	w.tracef("longhorn", "%s detached from %s (engine recorded stopped)", v.Name, old.Name)
}

// keepAttached restarts a crashed engine on its node once Longhorn reaches
// it again (the volume stays attached while its ticket exists).
func (w *World) keepAttached(v *Volume, lv *longhorn.Volume) {
	if v.current != nil && v.current.Running {
		return
	}
	node := w.nodeByName(lv.Spec.NodeID)
	if !w.longhornReaches(node) {
		return
	}
	if candidates := w.startable(v); len(candidates) > 0 {
		w.startEngine(v, node, candidates)
		w.tracef("longhorn", "%s: engine restarted on %s after it died", v.Name, node.Name)
	}
}

// attach starts an engine on the target node with the replicas Longhorn
// can start: not failed and on nodes it reaches (or, when every replica
// failed, the reachable failed ones: auto-salvage).
func (w *World) attach(v *Volume, lv *longhorn.Volume, node *Node) {
	if !w.longhornReaches(node) {
		return
	}
	candidates := w.startable(v)
	if len(candidates) == 0 {
		if lv.Status.Robustness != "faulted" {
			lv.Status.Robustness = "faulted"
			w.api.touch(lv)
			w.tracef("longhorn", "%s faulted: no replica can start", v.Name)
		}
		return
	}
	w.startEngine(v, node, candidates)
	for _, r := range v.Replicas {
		if !slices.Contains(candidates, r) {
			w.failReplica(r, "not reachable when the volume attached to "+node.Name)
		}
	}
	lv.Spec.NodeID, lv.Status.State, lv.Status.CurrentNodeID = node.Name, stateAttached, node.Name
	lv.Status.Robustness = "healthy"
	if len(candidates) < len(v.Replicas) {
		lv.Status.Robustness = "degraded"
	}
	w.api.touch(lv)
}

func (w *World) startable(v *Volume) []*Replica {
	var healthy, failed []*Replica
	for _, r := range v.Replicas {
		if !w.longhornReaches(r.Node) {
			continue
		}
		if w.api.longhornReplica(r.Name).Spec.FailedAt == "" {
			healthy = append(healthy, r)
		} else {
			failed = append(failed, r)
		}
	}
	if len(healthy) > 0 {
		return healthy
	}
	for _, r := range v.Replicas {
		if w.api.longhornReplica(r.Name).Spec.FailedAt == "" {
			return nil // a healthy replica exists, unreachable: no salvage
		}
	}
	return failed
}

// startEngine starts an engine process; the newest data among the
// replicas wins and the others are rebuilt from it.
func (w *World) startEngine(v *Volume, node *Node, replicas []*Replica) {
	source := replicas[0]
	for _, r := range replicas {
		if len(r.Data) > len(source.Data) {
			source = r
		}
	}
	data := slices.Clone(source.Data)
	e := &Engine{Seq: len(v.Engines), Node: node, Running: true, StartedAt: w.seconds()}
	modes := map[string]string{}
	for _, r := range replicas {
		r.Inc++
		r.Running, r.Data = true, slices.Clone(data)
		e.Set = append(e.Set, replicaRef{r: r, inc: r.Inc})
		modes[r.Name] = "RW"
		cr := w.api.longhornReplica(r.Name)
		cr.Spec.FailedAt, cr.Spec.HealthyAt = "", w.now.Format(time.RFC3339)
		w.api.touch(cr)
	}
	v.Engines = append(v.Engines, e)
	v.current = e
	ecr := w.api.longhornEngine(v.Name + "-e-0")
	ecr.Spec.NodeID, ecr.Spec.DesireState = node.Name, stateRunning
	ecr.Status.CurrentState, ecr.Status.ReplicaModeMap = stateRunning, modes
	w.api.touch(ecr)
	w.tracef("longhorn", "%s: engine e%d started on %s with %d replica(s), data from %s (%d writes)",
		v.Name, e.Seq, node.Name, len(replicas), source.Name, len(data))
}

// rebuild re-adds replicas the current engine does not use once Longhorn
// reaches them: their data is replaced by the engine's.
func (w *World) rebuild(v *Volume) {
	e := v.current
	if e == nil || !e.Running || len(e.Set) == 0 || !w.longhornReaches(e.Node) {
		return
	}
	for _, r := range v.Replicas {
		if e.uses(r) || !w.longhornReaches(r.Node) || !linked(e.Node, r.Node) {
			continue
		}
		discarded := len(r.Data) - len(e.data())
		r.Inc++
		r.Running, r.Data = true, slices.Clone(e.data())
		e.Set = append(e.Set, replicaRef{r: r, inc: r.Inc})
		cr := w.api.longhornReplica(r.Name)
		cr.Spec.FailedAt, cr.Spec.HealthyAt = "", w.now.Format(time.RFC3339)
		w.api.touch(cr)
		ecr := w.api.longhornEngine(v.Name + "-e-0")
		if ecr.Status.ReplicaModeMap == nil {
			ecr.Status.ReplicaModeMap = map[string]string{}
		}
		ecr.Status.ReplicaModeMap[r.Name] = "RW"
		w.api.touch(ecr)
		w.tracef("longhorn", "%s: replica %s on %s rebuilt from engine e%d (length %+d)", v.Name, r.Name, r.Node.Name, e.Seq, -discarded)
	}
}

// syncEngineStatus reports the current engine: unknown on a down node.
func (w *World) syncEngineStatus(v *Volume) {
	e := v.current
	if e == nil {
		return
	}
	state := stateStopped
	switch {
	case w.longhornDown(e.Node.Name):
		state = "unknown"
	case !w.longhornReaches(e.Node):
		return
	case e.Running:
		state = stateRunning
	}
	if ecr := w.api.longhornEngine(v.Name + "-e-0"); ecr.Status.CurrentState != state {
		ecr.Status.CurrentState = state
		w.api.touch(ecr)
	}
}

// syncReplicaStatus reports replica processes: unknown on a down node.
func (w *World) syncReplicaStatus(v *Volume) {
	for _, r := range v.Replicas {
		state := stateStopped
		switch {
		case w.longhornDown(r.Node.Name):
			state = "unknown"
		case !w.longhornReaches(r.Node):
			continue // not seen: unchanged
		case r.Running:
			state = stateRunning
		}
		cr := w.api.longhornReplica(r.Name)
		if cr.Status.CurrentState != state {
			cr.Status.CurrentState = state
			w.api.touch(cr)
		}
	}
}

// syncTicketStatus marks tickets satisfied while the volume runs on
// their node.
func (w *World) syncTicketStatus(v *Volume, lv *longhorn.Volume) {
	va := w.api.longhornAttachment(v.Name)
	changed := false
	statuses := map[string]*longhorn.AttachmentTicketStatus{}
	for id, t := range va.Spec.AttachmentTickets {
		satisfied := lv.Status.State == stateAttached && lv.Status.CurrentNodeID == t.NodeID && v.current != nil
		old := va.Status.AttachmentTicketStatuses[id]
		if old == nil || old.Satisfied != satisfied || old.Generation != t.Generation {
			changed = true
		}
		statuses[id] = &longhorn.AttachmentTicketStatus{ID: id, Satisfied: satisfied, Generation: t.Generation}
	}
	if changed || len(statuses) != len(va.Status.AttachmentTicketStatuses) {
		va.Status.AttachmentTicketStatuses = statuses
		w.api.touch(va)
	}
}
