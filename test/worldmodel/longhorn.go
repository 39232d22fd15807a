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
	"k8s.io/utils/ptr"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// longhorn-manager (github.com/longhorn/longhorn-manager at
// 5ddaa369fa7e3b0da9ee9fd42dbec24e25f793f6): one process per node. It never
// fences. A node's processes (engines, replicas, through its instance
// manager) are started, stopped and watched only by that node's own
// manager, which must reach the API server to record anything; once
// Longhorn considers the node down, the others record its processes
// stopped or unknown without contacting it (controller/instance_handler.go
// syncStatusWithInstanceManager). The volume's own logic is in
// longhorn_volume.go.

// reasonManagerPodDown is the Longhorn Node Ready=False reason while the
// node's longhorn-manager pod is not ready.
const reasonManagerPodDown = "ManagerPodDown"

// ignoreKubeletNotReady is how long Longhorn ignores a Kubernetes Ready=False
// (controller/node_controller.go ignoreKubeletNotReadyTime, issue #7302);
// Unknown counts at once.
const ignoreKubeletNotReady = 15 * time.Second

func longhornReady(n *longhorn.Node) *longhorn.Condition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == longhorn.NodeConditionReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// longhornDown is datastore/longhorn.go IsNodeDownOrDeleted:
// Ready=False because Kubernetes reports the node not Ready or gone
// (ManagerPodDown does not count).
func (w *World) longhornDown(node string) bool {
	c := longhornReady(w.api.longhornNode(node))
	return c.Status == statusFalse &&
		(c.Reason == longhorn.NodeReasonKubernetesNodeNotReady || c.Reason == longhorn.NodeReasonKubernetesNodeGone)
}

// managerOnline is whether the node's longhorn-manager runs and reaches
// the API server: only then can it record what its node's processes do.
func (w *World) managerOnline(n *Node) bool { return n.Powered && n.ManagerUp && n.CP }

// longhornReaches is whether longhorn-manager can start and stop
// processes on the node: its manager is online and Longhorn does not
// consider the node down.
func (w *World) longhornReaches(n *Node) bool {
	return w.managerOnline(n) && !w.longhornDown(n.Name)
}

// longhornClock is the clock of the manager that writes cluster-wide
// Longhorn state (node conditions): every manager's node controller syncs
// every node, so the first one online does here.
func (w *World) longhornClock() (time.Time, bool) {
	for _, n := range w.nodes {
		if w.managerOnline(n) {
			return w.nodeClock(n), true
		}
	}
	return time.Time{}, false
}

// longhornNodes is controller/node_controller.go
// setReadyAndSchedulableConditions: ManagerPodDown while the node's
// manager pod is not ready (as its kubelet last reported it), then
// KubernetesNodeNotReady while Kubernetes' Ready is not True (a False
// younger than 15 s on the manager's clock is ignored), which overrides it,
// and KubernetesNodeGone while the Node is missing (as test/longhornsim,
// longhornNodeReadiness).
func (w *World) longhornNodes() {
	now, ok := w.longhornClock()
	if !ok {
		return
	}
	for _, n := range w.nodes {
		status, reason := statusTrue, ""
		if !n.managerPodReady {
			status, reason = statusFalse, reasonManagerPodDown
		}
		node := w.api.node(n.Name)
		ready := readyCondition(node)
		switch {
		case node == nil:
			status, reason = statusFalse, longhorn.NodeReasonKubernetesNodeGone
		case ready == nil || ready.Status == corev1.ConditionUnknown:
			status, reason = statusFalse, longhorn.NodeReasonKubernetesNodeNotReady
		case ready.Status == corev1.ConditionFalse:
			if since := ready.LastTransitionTime.Add(ignoreKubeletNotReady); now.Before(since) {
				w.wakeAt(w.now.Add(since.Sub(now)))
			} else {
				status, reason = statusFalse, longhorn.NodeReasonKubernetesNodeNotReady
			}
		}
		lhn := w.api.longhornNode(n.Name)
		c := longhornReady(lhn)
		if c.Status != status || c.Reason != reason {
			c.Status, c.Reason, c.LastTransitionTime = status, reason, apiTime(now)
			w.api.touch(lhn)
			w.tracef("longhorn", "node %s Ready=%s %s", n.Name, status, reason)
		}
	}
}

// syncReplicaInstances is the replica controller with the instance
// handler (controller/instance_handler.go ReconcileInstanceState,
// syncStatusWithInstanceManager): the replica's node's manager starts or
// stops the process as spec.desireState says and reports it; on a node
// Longhorn considers down a replica wanted running is unknown and one
// wanted stopped is recorded stopped; otherwise nothing changes.
func (w *World) syncReplicaInstances(v *Volume) {
	for _, r := range v.Replicas {
		cr := w.api.longhornReplica(r.Name)
		state := cr.Status.CurrentState
		switch {
		case w.longhornDown(r.Node.Name):
			state = stateStopped
			if cr.Spec.DesireState == stateRunning {
				state = stateUnknown
			}
		case w.longhornReaches(r.Node):
			switch {
			case cr.Spec.DesireState == stateRunning && !r.Running:
				r.Inc++
				r.Running = true
			case cr.Spec.DesireState != stateRunning && r.Running:
				r.Running = false
			}
			state = stateStopped
			if r.Running {
				state = stateRunning
			}
		}
		if cr.Status.CurrentState != state {
			cr.Status.CurrentState = state
			w.api.touch(cr)
		}
	}
}

// stopStaleEngines: an engine process that is not the volume's current
// one is stopped once its node's manager reaches it again (its instance
// manager reports an instance whose Engine wants it stopped).
func (w *World) stopStaleEngines(v *Volume) {
	for _, e := range v.Engines {
		if e != v.current && e.Running && w.longhornReaches(e.Node) {
			e.Running = false
			w.tracef("longhorn", "%s: stopped stale engine e%d on %s", v.Name, e.Seq, e.Node.Name)
		}
	}
}

// monitorEngine is controller/engine_controller.go EngineMonitor.refresh,
// every EnginePollInterval (5 s), run by the manager that owns the engine:
// the one of its node while that node is not down. It copies the engine
// process's replica modes into status.replicaModeMap; while that manager
// cannot reach the API server nothing is recorded, and once the node is
// down the engine's state is unknown and the monitor stops.
func (w *World) monitorEngine(v *Volume) {
	e := v.current
	ecr := w.api.longhornEngine(engineName(v))
	switch {
	case e == nil:
		return
	case w.longhornDown(e.Node.Name):
		if ecr.Status.CurrentState != stateUnknown {
			ecr.Status.CurrentState = stateUnknown
			w.api.touch(ecr)
		}
		return
	case !w.longhornReaches(e.Node):
		return
	}
	if w.now.Before(e.nextPoll) {
		return // polled at the base period's ticks: no extra steps
	}
	e.nextPoll = w.now.Truncate(enginePollInterval).Add(enginePollInterval)
	state := stateError // the process died (a reboot, a crash)
	modes := map[string]string{}
	if e.Running {
		state = stateRunning
		for _, ref := range e.reps {
			modes[ref.r.Name] = ref.mode.String()
		}
	}
	if ecr.Status.CurrentState != state || !equalModes(ecr.Status.ReplicaModeMap, modes) {
		ecr.Status.CurrentState, ecr.Status.ReplicaModeMap = state, modes
		w.api.touch(ecr)
	}
}

// enginePollInterval is EnginePollInterval.
const enginePollInterval = 5 * time.Second

func equalModes(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// engineName is the Volume's one Engine CR (the model never live-migrates
// or upgrades).
func engineName(v *Volume) string { return v.Name + "-e-0" }

// remountDelay is remountRequestDelayDuration.
const remountDelay = 5 * time.Second

// remountPods is controller/kubernetes_pod_controller.go
// handlePodDeletionIfVolumeRequestRemount (setting
// auto-delete-pod-when-volume-detached-unexpectedly, default true), on the
// pod's node's manager: a controller-owned pod that started before its
// volume's remount request is deleted (30 s grace) 5 s after it, so that
// its workload mounts the volume anew. Both times are compared on the
// manager's clock as written by others.
func (w *World) remountPods() {
	for _, p := range w.api.pods() {
		if podTerminating(p) || p.Spec.NodeName == "" || p.Status.StartTime == nil {
			continue
		}
		v, n := w.volumeOfClaim(claimOf(p)), w.nodeByName(p.Spec.NodeName)
		if v == nil || v.remountRequestedAt.IsZero() || !w.managerOnline(n) || !p.Status.StartTime.Time.Before(v.remountRequestedAt) {
			continue
		}
		if due := v.remountRequestedAt.Add(remountDelay); !w.nodeClock(n).After(due) {
			w.wakeAt(w.now.Add(due.Sub(w.nodeClock(n)) + time.Millisecond))
			continue
		}
		w.tracef("longhorn", "deletes pod %s for a remount of %s", p.Name, v.Name)
		deletePod(w.api, p, ptr.To(int64(corev1.DefaultTerminationGracePeriodSeconds)))
	}
}
