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
	"k8s.io/apimachinery/pkg/types"
)

// This file is the physical truth: machines, networks and processes. The
// API objects are only what the components below report about it.

// Node is one machine.
type Node struct {
	Name    string
	Powered bool
	// KubeletUp is whether the kubelet process runs (it starts at boot).
	KubeletUp bool
	// RuntimeUp is whether the container runtime answers. While it is down
	// a live kubelet reports NotReady, but running containers go on.
	RuntimeUp bool
	// CP is whether the node reaches the control plane (API server and the
	// Longhorn managers, which run beside it).
	CP bool
	// Net is the node's data-path partition: two nodes reach each other
	// iff they share Net.
	Net int
	// fencedOff: a fencer switched it off (FAR action off); only the final
	// heal brings it back.
	fencedOff bool

	// The kubelet's node-local state.
	synced     bool // resynced with the API since boot
	containers []*Container
	// mounts are the volume handles the kubelet uses or is about to mount,
	// which it reports as status.volumesInUse.
	mounts     []string
	nextLease  int64 // model seconds of the next Lease renewal
	nextStatus int64 // model seconds of the next node status computation
}

// Container is the s3gw gateway process, the writer of its volume.
type Container struct {
	PodUID types.UID
	Vol    *Volume
	// Engine is the engine process its mount goes through; writes fail
	// once it stops, whatever else runs.
	Engine *Engine
}

// Volume is one s3gw instance's RWO Longhorn volume and its processes.
type Volume struct {
	Index    int
	Name     string // PV name, CSI handle, Longhorn volume name
	Replicas []*Replica
	Engines  []*Engine // every engine process ever started
	// current is the engine longhorn-manager believes serves the volume.
	current *Engine
	acked   []ack
}

// Replica is a replica process and its disk. Data is the sequence of write
// IDs the disk holds; it survives a stopped process and a power cycle.
type Replica struct {
	Name    string
	Node    *Node
	Running bool
	// Inc is the process incarnation: a restart breaks every engine's
	// connection to the old process.
	Inc  int
	Data []int
}

// Engine is an engine process.
type Engine struct {
	Seq     int
	Node    *Node
	Running bool
	// Set is the replica processes it still writes to. It only shrinks:
	// only longhorn-manager adds replicas (by rebuilding them).
	Set []replicaRef
	// dropped are replicas it gave up, not yet seen by longhorn-manager.
	dropped []*Replica
	// StartedAt is the model time in seconds it started.
	StartedAt float64
}

type replicaRef struct {
	r   *Replica
	inc int
}

// ack is one write an engine acknowledged to its client.
type ack struct {
	id     int
	engine *Engine
	at     float64
	onto   []*Replica
}

// linked reports whether two powered nodes reach each other on the data path.
func linked(a, b *Node) bool {
	return a == b || (a.Powered && b.Powered && a.Net == b.Net)
}

// reaches reports whether an engine can still use a replica process.
func (e *Engine) reaches(ref replicaRef) bool {
	r := ref.r
	return r.Running && r.Inc == ref.inc && r.Node.Powered && linked(e.Node, r.Node)
}

// uses reports whether r (its current process) is in the engine's set.
func (e *Engine) uses(r *Replica) bool {
	for _, ref := range e.Set {
		if ref.r == r && ref.inc == r.Inc {
			return true
		}
	}
	return false
}

// dropUnreachable is the engine's replica timeout: replicas it cannot
// reach leave its set for good.
func (e *Engine) dropUnreachable() {
	kept := e.Set[:0]
	for _, ref := range e.Set {
		if e.reaches(ref) {
			kept = append(kept, ref)
		} else {
			e.dropped = append(e.dropped, ref.r)
		}
	}
	e.Set = kept
}

// data is what the engine serves: every replica in its set holds it.
func (e *Engine) data() []int {
	if len(e.Set) == 0 {
		return nil
	}
	return e.Set[0].r.Data
}

// powerOff kills everything on the node; disks keep their data.
func (n *Node) powerOff(w *World) {
	n.Powered, n.synced = false, false
	n.containers, n.mounts = nil, nil
	for _, v := range w.volumes {
		for _, e := range v.Engines {
			if e.Node == n {
				e.Running = false
			}
		}
		for _, r := range v.Replicas {
			if r.Node == n {
				r.Running = false
			}
		}
	}
}

// powerOn boots the node; no container runs until the kubelet has
// resynced with the API.
func (n *Node) powerOn() {
	n.Powered, n.fencedOff = true, false
}

// container returns the node's container of a pod, or nil.
func (n *Node) container(uid types.UID) *Container {
	for _, c := range n.containers {
		if c.PodUID == uid {
			return c
		}
	}
	return nil
}

// physics runs one I/O round: every running writer writes once through
// its engine, which acknowledges iff it still reaches a replica.
func (w *World) physics() {
	for _, v := range w.volumes {
		for _, e := range v.Engines {
			if e.Running {
				e.dropUnreachable()
			}
		}
	}
	for _, n := range w.nodes {
		if !n.Powered {
			continue
		}
		for _, c := range n.containers {
			w.write(c)
		}
	}
}

func (w *World) write(c *Container) {
	e := c.Engine
	if e == nil || !e.Running || len(e.Set) == 0 {
		return // I/O error: nothing acknowledged
	}
	w.writes++
	a := ack{id: w.writes, engine: e, at: w.seconds()}
	for _, ref := range e.Set {
		ref.r.Data = append(ref.r.Data, a.id)
		a.onto = append(a.onto, ref.r)
	}
	c.Vol.acked = append(c.Vol.acked, a)
}
