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
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// FaultKind is what goes wrong physically.
type FaultKind int

// Fault kinds.
const (
	// PowerLoss switches nodes off (a crash).
	PowerLoss FaultKind = iota
	// Reboot switches nodes off, then on after For.
	Reboot
	// KubeletDown stops the kubelet; containers and the network go on.
	KubeletDown
	// RuntimeDown stops the container runtime: a live kubelet reports
	// NotReady while containers go on.
	RuntimeDown
	// Partition cuts nodes from the control plane and from the other
	// nodes; with Rack they still reach each other.
	Partition
	// ControlPlaneCut cuts nodes from the control plane only.
	ControlPlaneCut
	// StorageCut cuts nodes' data path to the other nodes only.
	StorageCut
	// ManagerDown crash-loops the node's longhorn-manager: the kubelet, the
	// instance manager and the data path go on.
	ManagerDown
)

func (k FaultKind) String() string {
	return [...]string{"power loss", "reboot", "kubelet down", "runtime down", "partition",
		"control-plane cut", "storage cut", "longhorn-manager down"}[k]
}

// Fault is one scripted physical failure; For is how long until it heals
// (0: until the end of the episode).
type Fault struct {
	At    time.Duration
	Kind  FaultKind
	Nodes []int
	Rack  bool
	For   time.Duration
}

func (f Fault) String() string {
	names := make([]string, len(f.Nodes))
	for i, n := range f.Nodes {
		names[i] = fmt.Sprintf("n%d", n+1)
	}
	s := fmt.Sprintf("%s of %s", f.Kind, strings.Join(names, ","))
	if f.Rack {
		s += " (rack: still connected to each other)"
	}
	if f.For > 0 {
		s += fmt.Sprintf(" for %s", f.For)
	}
	return s
}

// generateFaults hits an s3gw node first; a second fault sometimes follows,
// often on the same node once it recovered (a new failure episode).
func generateFaults(r *rand.Rand, sc *Scenario) []Fault {
	first := generateFault(r, sc, sc.Instances[0].Node, between(r, 20*time.Second, 2*time.Minute))
	faults := []Fault{first}
	if chance(r, 0.4) {
		at := first.At + between(r, 2*time.Minute, 12*time.Minute)
		if first.For > 0 {
			at = first.At + first.For + between(r, time.Minute, 8*time.Minute)
		}
		node := sc.Instances[r.IntN(len(sc.Instances))].Node
		if chance(r, 0.3) {
			node = r.IntN(sc.Nodes)
		}
		if at < sc.Duration-2*time.Minute {
			faults = append(faults, generateFault(r, sc, node, at))
		}
	}
	return faults
}

func generateFault(r *rand.Rand, sc *Scenario, node int, at time.Duration) Fault {
	f := Fault{At: at, Nodes: []int{node}}
	f.Kind = pick(r, PowerLoss, PowerLoss, Reboot, KubeletDown, RuntimeDown, Partition, Partition, Partition,
		ControlPlaneCut, StorageCut, ManagerDown)
	if chance(r, 0.5) {
		f.For = between(r, time.Minute, 12*time.Minute)
	}
	switch f.Kind {
	case Reboot:
		f.For = between(r, 30*time.Second, 3*time.Minute)
	case Partition:
		f.Rack = chance(r, 0.6)
		f.Nodes = append(f.Nodes, rackPeers(r, sc, node)...)
	}
	return f
}

// rackPeers adds 0-2 nodes to a partition, preferring replica holders:
// a rack's uplink fails for all its nodes.
func rackPeers(r *rand.Rand, sc *Scenario, node int) []int {
	var candidates []int
	for _, in := range sc.Instances {
		for _, rn := range in.Replicas {
			if rn != node && !slices.Contains(candidates, rn) {
				candidates = append(candidates, rn)
			}
		}
	}
	for n := range sc.Nodes {
		if n != node && !slices.Contains(candidates, n) && chance(r, 0.3) {
			candidates = append(candidates, n)
		}
	}
	peers := min(pick(r, 0, 1, 1, 2), len(candidates), sc.Nodes-2)
	return candidates[:max(peers, 0)]
}

// activeFault is a fault in effect, with the data-path groups its
// partition gave its nodes.
type activeFault struct {
	Fault
	nodes  []*Node
	groups map[*Node]int
}

// apply starts a fault and schedules its healing. Faults may overlap: a
// node's state is recomputed from every fault still in effect.
func (f Fault) apply(w *World) {
	a := &activeFault{Fault: f, groups: map[*Node]int{}}
	group := w.newNet()
	for _, n := range f.Nodes {
		node := w.nodes[n]
		a.nodes = append(a.nodes, node)
		if !f.Rack {
			group = w.newNet()
		}
		a.groups[node] = group
	}
	w.tracef("fault", "%s", f)
	w.faults = append(w.faults, a)
	w.applyFaults()
	if f.For > 0 {
		w.schedule(f.For, "heal: "+f.String(), func() {
			w.tracef("fault", "healed: %s", f)
			w.faults = slices.DeleteFunc(w.faults, func(x *activeFault) bool { return x == a })
			w.applyFaults()
		})
	}
}

// applyFaults sets every node from the faults in effect.
func (w *World) applyFaults() {
	for _, n := range w.nodes {
		var off, kubeletDown, runtimeDown, managerDown bool
		cp, net := true, 0
		for _, a := range w.faults {
			if _, hit := a.groups[n]; !hit {
				continue
			}
			switch a.Kind {
			case PowerLoss, Reboot:
				off = true
			case KubeletDown:
				kubeletDown = true
			case RuntimeDown:
				runtimeDown = true
			case ManagerDown:
				managerDown = true
			case Partition:
				cp, net = false, a.groups[n]
			case ControlPlaneCut:
				cp = false
			case StorageCut:
				net = a.groups[n]
			}
		}
		switch {
		case off:
			w.powerOff(n, "fault")
		case !n.Powered && !n.fencedOff:
			w.powerOn(n)
		}
		n.KubeletUp, n.RuntimeUp, n.ManagerUp, n.CP, n.Net = !kubeletDown, !runtimeDown, !managerDown, cp, net
	}
}
