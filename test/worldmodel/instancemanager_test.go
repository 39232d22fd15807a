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
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// replicaWorld is three nodes, s3gw on n1 and its volume's replicas on n2
// and n3, nothing failed and no operator.
func replicaWorld(t *testing.T, sc *Scenario) *World {
	t.Helper()
	if sc == nil {
		sc = &Scenario{}
	}
	sc.Nodes, sc.Duration = 3, 20*time.Minute
	sc.Instances = []InstanceSpec{{Node: 0, Replicas: []int{1, 2}}}
	sc.Spec = s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
		Mode: s3gwv1alpha1.FencingModeRequireEvidence, StorageIsolation: ptr.To(true)}}
	sc.Clocks = generateClocks(rand.New(rand.NewPCG(1, 2)), sc.Nodes).synchronised()
	return newWorld(sc, rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4)), nil)
}

// markLonghornDown makes Longhorn count the node down, as longhornNodes
// does once Kubernetes reports it NotReady.
func markLonghornDown(w *World, node string, down bool) {
	c := longhornReady(w.api.longhornNode(node))
	c.Status, c.Reason = statusTrue, ""
	if down {
		c.Status, c.Reason = statusFalse, longhorn.NodeReasonKubernetesNodeNotReady
	}
}

// runInstanceManagers runs the instance manager components for d, at
// every wake they ask for.
func runInstanceManagers(w *World, d time.Duration) {
	until := w.now.Add(d)
	for {
		w.instanceManagers()
		next := w.nextWake()
		if next.After(until) {
			w.now = until
			w.instanceManagers()
			return
		}
		w.now = next
	}
}

// TestInstanceManagerFollowsItsNode pins the CR to upstream's rules
// (instancemanager.go): the node's own manager reports its processes
// within a tick; offline, the CR goes stale; on a down node it is unknown
// and keeps its list.
func TestInstanceManagerFollowsItsNode(t *testing.T) {
	tests := []struct {
		name string
		// act changes the world, then the components run for after.
		act   func(w *World, n *Node, r *Replica)
		after time.Duration
		// state and listed are the CR's state and whether it lists r.
		state  string
		listed bool
	}{
		{name: "running replica listed", after: 10 * time.Second, state: stateRunning, listed: true},
		{name: "stopped replica: still listed until the next tick", act: stopReplica, after: 500 * time.Millisecond,
			state: stateRunning, listed: true},
		{name: "stopped replica: gone at the next tick", act: stopReplica, after: time.Second, state: stateRunning},
		{name: "cut from the control plane: stale", act: func(w *World, n *Node, r *Replica) { n.CP = false; stopReplica(w, n, r) },
			after: 5 * time.Minute, state: stateRunning, listed: true},
		{name: "cut healed: stale until the periodic poll", act: cutThenHeal, after: 50 * time.Second,
			state: stateRunning, listed: true},
		{name: "cut healed: refreshed by the periodic poll", act: cutThenHeal, after: 61 * time.Second, state: stateRunning},
		{name: "longhorn-manager down: stale", act: func(w *World, n *Node, r *Replica) { n.ManagerUp = false; stopReplica(w, n, r) },
			after: 5 * time.Minute, state: stateRunning, listed: true},
		{name: "powered off: stale until Longhorn counts it down", act: func(w *World, n *Node, r *Replica) { w.powerOff(n, "test") },
			after: time.Minute, state: stateRunning, listed: true},
		{name: "down: unknown, its list kept", act: func(w *World, n *Node, r *Replica) {
			w.powerOff(n, "test")
			markLonghornDown(w, n.Name, true)
		}, after: time.Minute, state: stateUnknown, listed: true},
		{name: "back from down: running, refreshed at the first tick", act: func(w *World, n *Node, r *Replica) {
			w.powerOff(n, "test")
			markLonghornDown(w, n.Name, true)
			runInstanceManagers(w, time.Minute)
			w.powerOn(n)
			markLonghornDown(w, n.Name, false)
		}, after: time.Second, state: stateRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := replicaWorld(t, nil)
			r := w.volumes[0].Replicas[0]
			n := r.Node
			if tt.act != nil {
				tt.act(w, n, r)
			}
			runInstanceManagers(w, tt.after)
			im := w.api.longhornInstanceManager(n.Name)
			_, listed := im.Status.InstanceReplicas[r.Name]
			if im.Status.CurrentState != tt.state || listed != tt.listed || im.Spec.NodeID != n.Name {
				t.Errorf("%s's instance manager: %s, lists %s: %v; want %s, %v", n.Name, im.Status.CurrentState, r.Name, listed,
					tt.state, tt.listed)
			}
		})
	}
}

func stopReplica(_ *World, _ *Node, r *Replica) { r.Running = false }

// cutThenHeal stops the replica while the node is cut: the monitor's
// write is lost, and nothing else changes on the node afterwards.
func cutThenHeal(w *World, n *Node, r *Replica) {
	n.CP = false
	r.Running = false
	runInstanceManagers(w, 2*time.Second)
	n.CP = true
}

// TestInstanceManagerWritesOnlyChanges: a world at rest writes no CR.
func TestInstanceManagerWritesOnlyChanges(t *testing.T) {
	w := replicaWorld(t, nil)
	rv := w.api.rv
	runInstanceManagers(w, 5*time.Minute)
	if w.api.rv != rv {
		t.Errorf("instance managers wrote %d times with nothing changing", w.api.rv-rv)
	}
}

// TestInstanceManagerAcrossALongCut: a replica node cut from the control
// plane long enough for Kubernetes to mark it NotReady and Longhorn to
// count it down, then healed (the targeted cuts' 1-10 min), with its
// replica running throughout. Upstream's instance manager never turns
// starting on the way back (syncInstanceManagerState's comment):
// unknown while down, then running with the list it had, which names the
// replica at every step.
func TestInstanceManagerAcrossALongCut(t *testing.T) {
	w := replicaWorld(t, nil)
	r := w.volumes[0].Replicas[0]
	n := r.Node
	Fault{Kind: ControlPlaneCut, Nodes: []int{slices.Index(w.nodes, n)}, For: 2 * time.Minute}.apply(w)
	var notReady, down, unknown, back bool
	for until := w.now.Add(4 * time.Minute); w.now.Before(until); w.now = w.nextWake() {
		w.step()
		notReady = notReady || readyCondition(w.api.node(n.Name)).Status == corev1.ConditionUnknown
		down = down || w.longhornDown(n.Name)
		im := w.api.longhornInstanceManager(n.Name)
		_, listed := im.Status.InstanceReplicas[r.Name]
		switch im.Status.CurrentState {
		case stateUnknown:
			unknown = true
		case stateRunning:
			back = back || unknown
			if !listed && r.Running {
				t.Fatalf("%s: %s's instance manager running without the running replica %s", w.now.Sub(w.start), n.Name, r.Name)
			}
		default:
			t.Fatalf("%s: %s's instance manager %s", w.now.Sub(w.start), n.Name, im.Status.CurrentState)
		}
	}
	if !notReady || !down || !unknown || !back || !r.Running {
		t.Errorf("NotReady %v, Longhorn down %v, unknown %v, running again %v, replica running %v: want all",
			notReady, down, unknown, back, r.Running)
	}
}
