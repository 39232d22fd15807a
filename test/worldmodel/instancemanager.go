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
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// Each node's InstanceManager CR (longhorn-manager
// 5ddaa369fa7e3b0da9ee9fd42dbec24e25f793f6,
// controller/instance_manager_controller.go): its state, written by the
// manager responsible for it, and its list of replica processes, which
// only the node's own manager's InstanceManagerMonitor refreshes, from the
// process itself. The operator reads it to confirm a replica stopped; the
// model's Longhorn does not (syncReplicaInstances reads the processes).

// Upstream's monitor ticks every MinPollCount × PollInterval (1 s); a
// process change on its watch stream makes the next tick poll, and every
// MaxPollCount (60) ticks it polls anyway (engineapi/types.go,
// InstanceManagerMonitor.Run).
const (
	imPollTick = time.Second
	imFullPoll = 60 * time.Second
)

// imMonitor is a node's InstanceManagerMonitor as far as it matters here.
type imMonitor struct {
	// name is the CR's (instanceManagerName, computed once).
	name string
	// alive: it runs (startMonitoring on the owning manager).
	alive bool
	// listed are the running replicas its last poll saw; a difference is
	// a process change on its watch stream.
	listed []string
	// due is its next poll; zero: none until a process changes.
	due time.Time
}

// instanceManagerName is types.GetInstanceManagerName: a prefix and a
// checksum of the node (and image and data engine, one of each here), so
// the operator must find a node's manager by spec.nodeID, not by name.
func instanceManagerName(node string) string {
	sum := sha256.Sum256([]byte(node))
	return "instance-manager-" + hex.EncodeToString(sum[:16])
}

// buildInstanceManagers creates every node's CR as a running manager's
// monitor left it: running, listing the replicas running there.
func (w *World) buildInstanceManagers() {
	for _, n := range w.nodes {
		running := w.runningReplicas(n)
		w.api.create(&longhorn.InstanceManager{
			// Labelled by node as longhorn-manager does
			// (types/types.go GetInstanceManagerLabels).
			ObjectMeta: metav1.ObjectMeta{Namespace: longhornNamespace, Name: instanceManagerName(n.Name),
				Labels: map[string]string{longhorn.InstanceManagerNodeLabel: n.Name}},
			Spec: longhorn.InstanceManagerSpec{NodeID: n.Name},
			Status: longhorn.InstanceManagerStatus{CurrentState: longhorn.InstanceManagerRunning,
				InstanceReplicas: replicaProcesses(running)},
		})
		n.im = imMonitor{name: instanceManagerName(n.Name), alive: true, listed: running}
	}
}

// instanceManagers runs, for every node's CR, the instance manager
// controller's state sync and the node's monitor.
func (w *World) instanceManagers() {
	for _, n := range w.nodes {
		im := w.api.instanceManager(n.im.name)
		w.syncInstanceManagerState(n, im)
		w.monitorInstanceManager(n, im)
	}
}

// syncInstanceManagerState is syncInstanceManager's syncStatusWithPod and
// syncStatusWithNode on the manager responsible for the CR
// (isControllerResponsibleFor): the node's own manager, or once Longhorn
// counts the node down any other (a crash-looping manager, ManagerPodDown,
// is not ManagerPodMissing: nobody takes over). On a down node the state
// turns unknown and the list stays as last written: syncInstanceStatus
// blanks it only when stopped, error or starting, and syncMonitor leaves
// an unknown manager unmonitored. The node's own manager, online, finds
// the instance manager pod running and Ready (the model has no pod of its
// own for it: it runs while the node is powered). Anything else leaves the
// CR stale.
//
// A node cut from the control plane that Kubernetes marks NotReady, then
// returns, never turns the CR starting: syncStatusWithPod reads the pod's
// phase and its containerStatuses[].ready, not its Ready condition, and
// the node lifecycle controller's MarkPodsNotReady
// (pkg/controller/util/node/controller_utils.go) sets only the Ready
// condition False (kubernetes/kubernetes issue 82346: Ready False,
// ContainersReady True); the kubelet re-posts it True on its return
// (reconcilePodStatuses). Container readiness would fall only with a
// readiness probe, and createInstanceManagerPodSpec gives the instance
// manager container a liveness probe alone. So on the node's return
// syncStatusWithPod writes running, syncStatusWithNode no longer unknown,
// syncInstanceStatus leaves the list as it was, and the restarted monitor
// (syncMonitor, startMonitoring: updateNotification true) rewrites it at
// its first tick. Not modelled: the pod has no toleration of its own for
// the unreachable taint (createGenericManagerPodSpec takes the
// taint-toleration setting, empty by default), so the DefaultTolerationSeconds
// admission plugin's 300 s applies and taint eviction deletes it on a node
// unreachable that long; the CR turns error (DeletionTimestamp set), its
// list blanked, and the returning kubelet kills the container with every
// replica process in it before the CR can run again (the new pod has the
// same name, so it waits for the old one's deletion).
func (w *World) syncInstanceManagerState(n *Node, im *longhorn.InstanceManager) {
	state := im.Status.CurrentState
	switch {
	case w.longhornDown(n.Name):
		if _, anyOnline := w.longhornClock(); anyOnline {
			state = longhorn.InstanceManagerUnknown
		}
	case w.managerOnline(n):
		state = longhorn.InstanceManagerRunning
	}
	if state != im.Status.CurrentState {
		im.Status.CurrentState = state
		w.api.touch(im)
		w.tracef("longhorn", "instance manager of %s %s", n.Name, state)
	}
}

// monitorInstanceManager is InstanceManagerMonitor (Run, pollInstanceMap,
// syncInstances, updateInstanceMap) on the node's own manager: it runs
// while that manager process does and owns a running CR; a fresh one polls
// at its first tick (updateNotification starts true), a process change at
// the next tick. A poll writes the list only when it changed; a write
// that cannot reach the API server is lost until the next poll, the
// periodic one unless another process changes.
func (w *World) monitorInstanceManager(n *Node, im *longhorn.InstanceManager) {
	m := &n.im
	if !n.Powered || !n.ManagerUp || w.longhornDown(n.Name) || im.Status.CurrentState != longhorn.InstanceManagerRunning {
		*m = imMonitor{name: m.name}
		return
	}
	nextTick := w.now.Truncate(imPollTick).Add(imPollTick)
	if !m.alive {
		*m = imMonitor{name: m.name, alive: true, due: nextTick}
	}
	running := w.runningReplicas(n)
	if !slices.Equal(running, m.listed) && (m.due.IsZero() || nextTick.Before(m.due)) {
		m.due = nextTick
	}
	if m.due.IsZero() {
		return
	}
	if w.now.Before(m.due) {
		w.wakeAt(m.due)
		return
	}
	m.listed, m.due = running, time.Time{}
	list := replicaProcesses(running)
	switch {
	case maps.Equal(list, im.Status.InstanceReplicas):
	case !n.CP:
		m.due = w.now.Add(imFullPoll)
		w.wakeAt(m.due)
	default:
		im.Status.InstanceReplicas = list
		w.api.touch(im)
	}
}

// runningReplicas are the replica processes running on the node, of any
// volume, by name in a fixed order.
func (w *World) runningReplicas(n *Node) []string {
	var out []string
	for _, v := range w.volumes {
		for _, r := range v.Replicas {
			if r.Node == n && r.Running {
				out = append(out, r.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// replicaProcesses is status.instanceReplicas for running processes; nil
// when there is none, as an empty map and nil are the same list upstream
// (updateInstanceMap compares them so).
func replicaProcesses(names []string) map[string]longhorn.InstanceProcess {
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]longhorn.InstanceProcess, len(names))
	for _, name := range names {
		out[name] = longhorn.InstanceProcess{Status: longhorn.InstanceProcessStatus{State: stateRunning}}
	}
	return out
}
