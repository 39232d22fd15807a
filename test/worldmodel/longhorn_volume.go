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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// What longhorn-manager (5ddaa369fa7e3b0da9ee9fd42dbec24e25f793f6) does for
// one volume: controller/volume_controller.go (ReconcileEngineReplicaState,
// ReconcileVolumeState, reconcileAttachDetachStateMachine,
// openVolumeDependentResources, closeVolumeDependentResources,
// replenishReplicas), controller/volume_attachment_controller.go, and the
// engine controller's replica bookkeeping.

// longhornVolumes runs longhorn-manager's controllers for every volume.
func (w *World) longhornVolumes() {
	for _, v := range w.volumes {
		w.syncReplicaInstances(v)
		w.stopStaleEngines(v)
		w.monitorEngine(v)
		lv := w.api.longhornVolume(v.Name)
		if owner := w.volumeOwner(lv); owner != nil {
			w.reconcileVolume(v, lv, owner)
		}
		w.engineReplicas(v)
		w.syncTicketStatus(v, lv)
	}
	w.remountPods()
}

// volumeOwner is controller/controller_manager.go isControllerResponsibleFor
// for the volume controller: the manager of spec.nodeID; the current owner
// while that node is unavailable; any manager once both are. An owner that
// is merely cut off (not yet down) keeps the volume, and nothing happens to
// it meanwhile.
func (w *World) volumeOwner(lv *longhorn.Volume) *Node {
	unavailable := func(name string) bool { return name == "" || w.longhornDown(name) }
	preferred, current := lv.Spec.NodeID, lv.Status.OwnerID
	for _, n := range w.nodes {
		if !w.managerOnline(n) {
			continue
		}
		if n.Name == preferred || (n.Name == current && unavailable(preferred)) || (unavailable(current) && unavailable(preferred)) {
			if current != n.Name {
				lv.Status.OwnerID = n.Name
				w.api.touch(lv)
			}
			return n
		}
	}
	return nil
}

// reconcileVolume is one sync of the volume controller on its owner's
// manager, whose clock stamps failedAt and healthyAt.
func (w *World) reconcileVolume(v *Volume, lv *longhorn.Volume, owner *Node) {
	clock := w.nodeClock(owner).Truncate(time.Second)
	now := clock.Format(time.RFC3339)
	w.reconcileEngineReplicaState(v, lv, clock)
	if w.autoSalvage(v, lv, clock) {
		return
	}
	w.attachController(v, lv)
	switch {
	case lv.Spec.NodeID == "" && lv.Status.State != stateDetached:
		w.closeVolume(v, lv, now)
	case lv.Spec.NodeID != "" && lv.Status.State != stateAttached:
		w.openVolume(v, lv, now)
	}
}

// reconcileEngineReplicaState: while the engine's state is unknown nothing
// about its replicas is recorded; while it runs, each replica its monitor
// reported ERR is marked failed (spec.failedAt) and stopped, each RW one
// gets healthyAt; a volume with fewer healthy replicas than it should have
// rebuilds one (replenishReplicas). An engine that died makes the volume
// faulted.
func (w *World) reconcileEngineReplicaState(v *Volume, lv *longhorn.Volume, clock time.Time) {
	now := clock.Format(time.RFC3339)
	ecr := w.api.longhornEngine(engineName(v))
	switch ecr.Status.CurrentState {
	case stateUnknown:
		w.setRobustness(lv, stateUnknown)
		return
	case stateError:
		if lv.Status.CurrentNodeID != "" {
			w.setRobustness(lv, robustnessFaulted)
		}
		return
	case stateRunning:
	default:
		return
	}
	if ecr.Status.ReplicaModeMap == nil {
		return
	}
	healthy, synced := 0, true
	for _, r := range v.Replicas {
		cr := w.api.longhornReplica(r.Name)
		mode, inEngine := ecr.Status.ReplicaModeMap[r.Name]
		switch mode {
		case modeERR.String():
			if cr.Spec.FailedAt == "" {
				w.failReplica(r, now, "ERR in engine e"+itoa(v.current.Seq))
			}
		case modeRW.String():
			if cr.Spec.HealthyAt == "" {
				cr.Spec.HealthyAt = now
				w.api.touch(cr)
			}
			healthy++
		}
		// hasEngineStatusSynced and getRebuildingReplicaCount: the engine
		// reports exactly the replicas not failed, none ERR, none WO.
		synced = synced && (cr.Spec.FailedAt == "") == inEngine && mode != modeERR.String() && mode != modeWO.String()
	}
	if healthy == 0 {
		return
	}
	if healthy >= lv.Spec.NumberOfReplicas {
		w.setRobustness(lv, robustnessHealthy)
		return
	}
	if lv.Status.Robustness != robustnessDegraded {
		v.degradedAt = clock
	}
	w.setRobustness(lv, robustnessDegraded)
	if lv.Status.State == stateAttached && synced {
		w.replenishReplicas(v, lv, clock)
	}
}

// replenishReplicas is replenishReplicas for a degraded attached volume
// short of spec.numberOfReplicas usable replicas, one at a time:
// scheduler.CheckAndReuseFailedReplica reuses a failed replica on a Ready
// node for a rebuild (failedAt and healthyAt cleared); failing that,
// RequireNewReplica creates a new replica at once when no failed replica
// may still be reused (IsPotentiallyReusableReplica: every failed replica
// here), else once the volume has been degraded for
// replica-replenishment-wait-interval (timeToReplacementReplica, on the
// owner's clock: status.lastDegradedAt).
func (w *World) replenishReplicas(v *Volume, lv *longhorn.Volume, clock time.Time) {
	usable, failed := 0, false
	for _, r := range v.Replicas {
		if w.api.longhornReplica(r.Name).Spec.FailedAt == "" {
			usable++
		} else {
			failed = true
		}
	}
	if usable >= lv.Spec.NumberOfReplicas || w.reuseFailedReplica(v) {
		return
	}
	if due := v.degradedAt.Add(w.sc.Neighbours.replicaReplenishmentWait()); failed && clock.Before(due) {
		w.wakeAt(w.now.Add(due.Sub(clock) + time.Second))
		return
	}
	w.newReplica(v)
}

// reuseFailedReplica is scheduler.CheckAndReuseFailedReplica: one failed
// replica on a Ready node is reused for a rebuild (failedAt and healthyAt
// cleared).
func (w *World) reuseFailedReplica(v *Volume) bool {
	for _, r := range v.Replicas {
		cr := w.api.longhornReplica(r.Name)
		if cr.Spec.FailedAt == "" || !w.longhornReaches(r.Node) || longhornReady(w.api.longhornNode(r.Node.Name)).Status != statusTrue {
			continue
		}
		cr.Spec.FailedAt, cr.Spec.HealthyAt, cr.Spec.DesireState = "", "", stateRunning
		w.api.touch(cr)
		w.tracef("longhorn", "%s: rebuilding replica %s on %s", v.Name, r.Name, r.Node.Name)
		return true
	}
	return false
}

// newReplica is newReplicaCR and createReplica with the scheduler's
// placement: a Ready node Longhorn reaches that holds no replica of the
// volume but failed ones (getCurrentNodesAndZones with
// creatingNewReplicasForReplenishment; replica-soft-anti-affinity is off
// by default). Every disk here is alike, so the first such node in order
// takes it. The replica is created wanted running and empty; the engine
// rebuilds it once it runs (engineReplicas).
func (w *World) newReplica(v *Volume) {
	var target *Node
	for _, n := range w.nodes {
		if target != nil || !w.longhornReaches(n) || longhornReady(w.api.longhornNode(n.Name)).Status != statusTrue {
			continue
		}
		used := false
		for _, r := range v.Replicas {
			used = used || (r.Node == n && w.api.longhornReplica(r.Name).Spec.FailedAt == "")
		}
		if !used {
			target = n
		}
	}
	if target == nil {
		return // "precheck new replica failed": no node to schedule it on
	}
	r := &Replica{Name: fmt.Sprintf("%s-r-%d", v.Name, len(v.Replicas)), Node: target}
	v.Replicas = append(v.Replicas, r)
	w.api.create(&longhorn.Replica{
		ObjectMeta: metav1.ObjectMeta{Namespace: longhornNamespace, Name: r.Name, Labels: map[string]string{longhorn.VolumeLabel: v.Name}},
		Spec: longhorn.ReplicaSpec{NodeID: target.Name, VolumeName: v.Name, DesireState: stateRunning,
			RevisionCounterDisabled: v.RevisionCounterDisabled},
		Status: longhorn.ReplicaStatus{CurrentState: stateStopped},
	})
	w.tracef("longhorn", "%s: new replica %s on %s (degraded since %s on the owner's clock)", v.Name, r.Name, target.Name,
		v.degradedAt.Format(time.TimeOnly))
}

func (w *World) failReplica(r *Replica, now, why string) {
	cr := w.api.longhornReplica(r.Name)
	cr.Spec.FailedAt, cr.Spec.DesireState = now, stateStopped
	w.api.touch(cr)
	w.tracef("longhorn", "replica %s on %s failed: %s", r.Name, r.Node.Name, why)
}

func (w *World) setRobustness(lv *longhorn.Volume, robustness string) {
	if lv.Status.Robustness != robustness {
		lv.Status.Robustness = robustness
		w.api.touch(lv)
	}
}

// autoSalvageTimeLimit is AutoSalvageTimeLimit.
const autoSalvageTimeLimit = time.Minute

// autoSalvage is ReconcileVolumeState's auto-salvage: with no healthy
// replica and a failed one the volume is faulted; with the setting
// auto-salvage (default true) the engine's salvageRequested is set and,
// once detached, every failed replica that was healthy once, on a node
// that is not down and Ready, whose failedAt is within a minute of the
// latest, is no longer failed. Without it the volume stays faulted, its
// replicas failed, until someone salvages it by hand (neighbours.go). A
// faulted volume with usable replicas turns unknown. Either way it
// requests a remount. It reports whether the sync ends here.
func (w *World) autoSalvage(v *Volume, lv *longhorn.Volume, remountAt time.Time) bool {
	healthy, failed := 0, 0
	for _, r := range v.Replicas {
		cr := w.api.longhornReplica(r.Name)
		switch {
		case cr.Spec.FailedAt != "":
			failed++
		case cr.Spec.HealthyAt != "":
			healthy++
		}
	}
	if healthy > 0 || failed == 0 {
		if lv.Status.Robustness == robustnessFaulted && lv.Status.State == stateDetached {
			w.setRobustness(lv, stateUnknown)
			v.remountRequestedAt = remountAt
			return true
		}
		return false
	}
	w.setRobustness(lv, robustnessFaulted)
	if w.sc.Neighbours.AutoSalvageOff {
		return lv.Status.State == stateDetached
	}
	v.salvageRequested = true
	if lv.Status.State != stateDetached {
		return false
	}
	salvaged := w.salvageCandidates(v)
	for _, r := range salvaged {
		cr := w.api.longhornReplica(r.Name)
		cr.Spec.FailedAt = ""
		w.api.touch(cr)
		w.tracef("longhorn", "%s: auto-salvaging replica %s", v.Name, r.Name)
	}
	if len(salvaged) > 0 {
		w.setRobustness(lv, stateUnknown)
		v.remountRequestedAt = remountAt
	}
	return true
}

// salvageCandidates are the failed replicas auto-salvage brings back: they
// were healthy once, their node is neither down nor NotReady (its disks are
// then not schedulable: markAllDisksNotReadyWhenNodeNotReady), and they
// failed within a minute of the last one to fail (each failedAt on the
// clock of the manager that recorded it).
func (w *World) salvageCandidates(v *Volume) []*Replica {
	var usable []*Replica
	var failedAt []time.Time
	var latest time.Time
	for _, r := range v.Replicas {
		cr := w.api.longhornReplica(r.Name)
		if cr.Spec.HealthyAt == "" || w.longhornDown(r.Node.Name) || longhornReady(w.api.longhornNode(r.Node.Name)).Status != statusTrue {
			continue
		}
		if at, err := time.Parse(time.RFC3339, cr.Spec.FailedAt); err == nil {
			latest = maxTime(latest, at)
			usable, failedAt = append(usable, r), append(failedAt, at)
		}
	}
	var out []*Replica
	for i, r := range usable {
		if failedAt[i].Add(autoSalvageTimeLimit).After(latest) {
			out = append(out, r)
		}
	}
	return out
}

// attachController is controller/volume_attachment_controller.go: it
// clears spec.nodeID when no ticket wants the volume there or the volume is
// faulted, and sets it from the winning ticket only on a fully detached
// volume that is not faulted.
func (w *World) attachController(v *Volume, lv *longhorn.Volume) {
	va := w.api.longhornAttachment(v.Name)
	if lv.Spec.NodeID != "" && (!ticketNode(va, lv.Spec.NodeID) || lv.Status.Robustness == robustnessFaulted) {
		lv.Spec.NodeID = ""
		w.api.touch(lv)
	}
	if lv.Spec.NodeID == "" && lv.Status.State == stateDetached && lv.Status.Robustness != robustnessFaulted {
		if target := w.ticketTarget(v); target != nil {
			lv.Spec.NodeID = target.Name
			w.api.touch(lv)
		}
	}
}

// closeVolume is closeVolumeDependentResources until
// verifyVolumeDependentResourcesClosed: the engine is stopped first (its
// node's manager stops it; on a node Longhorn considers down it is only
// recorded stopped; on a node cut off but not yet down the detach waits);
// then a replica still rebuilding (never healthy) is marked failed, every
// replica is told to stop, and the volume is detached once all are
// recorded stopped.
func (w *World) closeVolume(v *Volume, lv *longhorn.Volume, now string) {
	if lv.Status.State != stateDetaching {
		lv.Status.State = stateDetaching
		w.api.touch(lv)
	}
	ecr := w.api.longhornEngine(engineName(v))
	if e := v.current; e != nil {
		switch {
		case w.longhornReaches(e.Node):
			e.Running = false
		case !w.longhornDown(e.Node.Name):
			return // its manager cannot stop it yet
		}
		v.current = nil
		ecr.Spec.NodeID, ecr.Spec.DesireState = "", stateStopped
		ecr.Status.CurrentState, ecr.Status.ReplicaModeMap = stateStopped, nil
		w.api.touch(ecr)
		w.tracef("longhorn", "%s: engine e%d on %s recorded stopped", v.Name, e.Seq, e.Node.Name)
	}
	dataExists := false
	for _, r := range v.Replicas {
		dataExists = dataExists || w.api.longhornReplica(r.Name).Spec.HealthyAt != ""
	}
	stopped := true
	for _, r := range v.Replicas {
		cr := w.api.longhornReplica(r.Name)
		if cr.Spec.HealthyAt == "" && cr.Spec.FailedAt == "" && dataExists {
			w.failReplica(r, now, "rebuild interrupted by the detach")
		}
		if cr.Spec.DesireState != stateStopped {
			cr.Spec.DesireState = stateStopped
			w.api.touch(cr)
		}
		stopped = stopped && cr.Status.CurrentState == stateStopped
	}
	if !stopped {
		return
	}
	lv.Status.State, lv.Status.CurrentNodeID = stateDetached, ""
	w.api.touch(lv)
	w.tracef("longhorn", "%s detached", v.Name)
}

// openVolume is openVolumeDependentResources, then the engine controller
// starting the process on spec.nodeID: a replica whose instance manager
// cannot launch it (its node is down) is marked failed; the others are
// told to run, and the engine waits until every one not failed runs. It is
// given those replicas (spec.replicaAddressMap) and salvageRequested. An
// engine that finds no replica fails: every replica it was given is marked
// failed, which leads to auto-salvage.
func (w *World) openVolume(v *Volume, lv *longhorn.Volume, now string) {
	if lv.Status.State != stateAttaching {
		lv.Status.State = stateAttaching
		w.api.touch(lv)
	}
	var addresses []*Replica
	ready := true
	for _, r := range v.Replicas {
		cr := w.api.longhornReplica(r.Name)
		if w.longhornDown(r.Node.Name) {
			if cr.Spec.FailedAt == "" {
				w.failReplica(r, now, "its node is down and the volume is not attached")
			}
			continue
		}
		if cr.Spec.FailedAt != "" {
			continue
		}
		if cr.Spec.DesireState != stateRunning {
			cr.Spec.DesireState = stateRunning
			w.api.touch(cr)
		}
		if cr.Status.CurrentState != stateRunning {
			ready = false
		}
		addresses = append(addresses, r)
	}
	node := w.nodeByName(lv.Spec.NodeID)
	if !ready || len(addresses) == 0 || !w.longhornReaches(node) {
		return
	}
	if w.now.Before(v.retryStart) {
		w.wakeAt(v.retryStart)
		return
	}
	w.rnd.Shuffle(len(addresses), func(i, j int) { addresses[i], addresses[j] = addresses[j], addresses[i] })
	addresses = w.coupledOrder("addresses "+v.Name, addresses)
	e := startEngine(w, v, node, addresses, v.salvageRequested)
	v.Engines = append(v.Engines, e)
	if !e.Running {
		for _, r := range addresses {
			w.failReplica(r, now, "engine e"+itoa(e.Seq)+" found no usable replica")
		}
		// The engine gave up on its replicas after their timeouts; the
		// volume controller retries with backoff.
		v.retryStart = w.now.Add(coupled(w.coupling, "engine retry "+v.Name, between(w.rnd, engineRetryMin, engineRetryMax),
			func(time.Duration) bool { return true }))
		return
	}
	v.current, v.salvageRequested = e, false
	e.nextPoll = w.now.Truncate(enginePollInterval).Add(enginePollInterval)
	ecr := w.api.longhornEngine(engineName(v))
	ecr.Spec.NodeID, ecr.Spec.DesireState = node.Name, stateRunning
	ecr.Status.CurrentState, ecr.Status.ReplicaModeMap = stateRunning, nil
	w.api.touch(ecr)
	lv.Status.State, lv.Status.CurrentNodeID = stateAttached, node.Name
	w.api.touch(lv)
	w.tracef("longhorn", "%s: engine e%d started on %s with %s (salvage %v): RW %s", v.Name, e.Seq, node.Name,
		replicaNames(addresses), e.salvage, replicaNames(e.startRW))
}

// engineReplicas is the engine controller on the engine's node
// (ReconcileEngineState, rebuildNewReplica): replicas marked failed leave
// the engine (RemoveReplica), and a running replica that is not failed and
// not in the engine is rebuilt into it.
func (w *World) engineReplicas(v *Volume) {
	e := v.current
	if e == nil || !e.Running || !w.longhornReaches(e.Node) {
		return
	}
	for _, ref := range slices.Clone(e.reps) {
		if w.api.longhornReplica(ref.r.Name).Spec.FailedAt != "" {
			e.remove(ref.r)
		}
	}
	for _, r := range v.Replicas {
		cr := w.api.longhornReplica(r.Name)
		if _, has := e.mode(r); has || cr.Spec.FailedAt != "" || cr.Status.CurrentState != stateRunning {
			continue
		}
		took := coupled(w.coupling, "rebuild "+r.Name, between(w.rnd, minRebuild, maxRebuild), func(time.Duration) bool { return true })
		if e.addRebuild(w, r, took) {
			w.tracef("longhorn", "%s: engine e%d rebuilds %s on %s", v.Name, e.Seq, r.Name, r.Node.Name)
		}
	}
}

// coupledOrder is the order of a map's replicas coupled by name
// (attribution.go): a baseline given the same replicas takes its operator
// run's order.
func (w *World) coupledOrder(name string, rs []*Replica) []*Replica {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	names = coupled(w.coupling, name, names, func(rec []string) bool {
		return len(rec) == len(rs) && !slices.ContainsFunc(rs, func(r *Replica) bool { return !slices.Contains(rec, r.Name) })
	})
	out := make([]*Replica, len(rs))
	for i, n := range names {
		out[i] = rs[slices.IndexFunc(rs, func(r *Replica) bool { return r.Name == n })]
	}
	return out
}

// A failed engine start is retried after a while.
const (
	engineRetryMin = 10 * time.Second
	engineRetryMax = 30 * time.Second
)

// A rebuild copies the volume's data over the network: tens of seconds
// to minutes for the chart's 10 GiB.
const (
	minRebuild = 20 * time.Second
	maxRebuild = 3 * time.Minute
)

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

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
