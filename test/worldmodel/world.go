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
	"time"

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
	// ManagerUp is whether the node's longhorn-manager process runs: it
	// can crash-loop while the kubelet, the instance manager and the data
	// path go on.
	ManagerUp bool
	// CP is whether the node reaches the control plane (the API server).
	CP bool
	// Net is the node's data-path partition: two nodes reach each other
	// iff they share Net.
	Net int
	// Skew is how far the node's clock is ahead of true time: every
	// timestamp its kubelet, its longhorn-manager and its replicas' files
	// carry comes from it.
	Skew time.Duration
	// fencedOff: a fencer switched it off (FAR action off); only the final
	// heal brings it back.
	fencedOff bool

	// managerPodReady is the longhorn-manager pod's readiness as the
	// kubelet last reported it.
	managerPodReady bool

	// The kubelet's node-local state.
	synced     bool // resynced with the API since boot
	containers []*Container
	// mounts are the volume handles the kubelet uses or is about to mount,
	// which it reports as status.volumesInUse.
	mounts     []string
	nextLease  int64 // model seconds of the next Lease renewal
	nextStatus int64 // model seconds of the next node status computation
	// nextPodStatus: model seconds of the status manager's next syncBatch.
	nextPodStatus int64

	// im is its longhorn-manager's monitor of its instance manager.
	im imMonitor
}

// Container is the s3gw gateway process, the client of its volume: it
// reads every block and writes one each I/O round.
type Container struct {
	PodUID types.UID
	Vol    *Volume
	// Engine is the engine process its mount goes through; I/O fails
	// once it stops, whatever else runs.
	Engine *Engine
}

// Volume is one s3gw instance's RWO Longhorn volume and its processes.
type Volume struct {
	Index    int
	Name     string // PV name, CSI handle, Longhorn volume name
	Replicas []*Replica
	Engines  []*Engine // every engine process ever started
	// RevisionCounterDisabled is the Longhorn Volume's
	// spec.revisionCounterDisabled: the engine then compares nothing
	// between replicas when it starts.
	RevisionCounterDisabled bool
	// current is the engine longhorn-manager believes serves the volume;
	// salvageRequested is its Engine's spec.salvageRequested, which
	// auto-salvage sets and a started engine clears.
	current          *Engine
	salvageRequested bool
	// retryStart is when longhorn-manager next tries to start an engine
	// after one failed; remountRequestedAt is the Volume's
	// status.remountRequestedAt (its owner's clock, whole seconds).
	retryStart, remountRequestedAt time.Time
	// degradedAt is the Volume's status.lastDegradedAt (its owner's
	// clock), kept while it is degraded.
	degradedAt time.Time
	// strandedAtDelegation are the replicas the API showed out of
	// Longhorn's reach when the operator created a delegate fencing CR for
	// the node serving the volume (audit.go, delegated); fencedByDelegate
	// those the delegate's fence powered off while the volume's engine ran
	// elsewhere (audit.go, fencedByDelegate).
	strandedAtDelegation, fencedByDelegate []*Replica
	hist                                   history
}

// Replica is a replica process and its disk, which survives a stopped
// process and a power cycle.
type Replica struct {
	Name    string
	Node    *Node
	Running bool
	// Inc is the process incarnation: a restart breaks every engine's
	// connection to the old process.
	Inc  int
	disk disk
}

// linked reports whether two powered nodes reach each other on the data path.
func linked(a, b *Node) bool {
	return a == b || (a.Powered && b.Powered && a.Net == b.Net)
}

// powerOff kills everything on the node; disks keep their data. A write
// the gateway had in flight may have reached some replicas (inFlightAtCrash).
func (n *Node) powerOff(w *World) {
	for _, c := range n.containers {
		w.inFlightAtCrash(c)
	}
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
// resynced with the API, and longhorn-manager starts with it.
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

// physics runs one I/O round: engines give up replicas they cannot reach,
// rebuilds that finished turn RW, and every running gateway reads each
// block of its volume and writes one.
func (w *World) physics() {
	for _, v := range w.volumes {
		for _, e := range v.Engines {
			if e.Running {
				e.monitorReplicas()
				e.finishRebuild(w)
			}
		}
	}
	for _, n := range w.nodes {
		if !n.Powered {
			continue
		}
		for _, c := range n.containers {
			w.clientIO(c)
		}
	}
}

// clientIO is one round of the gateway: read every block, then write a
// new value to one of them.
func (w *World) clientIO(c *Container) {
	e := c.Engine
	if e == nil || !e.Running {
		return // I/O error
	}
	w.expose(c.Vol, e, false)
	for b := range volumeBlocks {
		if got, from, ok := e.read(w, b); ok {
			w.checkRead(c.Vol, e, from, b, got)
		}
	}
	w.writes++
	b := coupled(w.coupling, "write "+c.Vol.Name, w.rnd.IntN(volumeBlocks), func(int) bool { return true })
	if onto, acked := e.write(w, b, w.writes); acked {
		c.Vol.hist.acked(write{id: w.writes, block: b, engine: e, at: w.seconds(), onto: onto})
	}
}

// inFlightAtCrash is the write a gateway may have had in flight when its
// node lost power: sent to the engine's replicas, never acknowledged,
// landed on any subset of them (longhorn-engine MultiWriterAt writes to
// every replica in parallel). Its draws are coupled by the volume's crash
// and the replica (attribution.go): a baseline crashing the same engine
// at the same moment writes the same block to the same replicas.
func (w *World) inFlightAtCrash(c *Container) {
	e := c.Engine
	if e == nil || !e.Running {
		return
	}
	always := func(bool) bool { return true }
	crash := fmt.Sprintf("crash %s e%d %.3f", c.Vol.Name, e.Seq, w.seconds())
	if !coupled(w.coupling, crash, chance(w.rnd, inFlightChance), always) {
		return
	}
	w.writes++
	b := coupled(w.coupling, crash+" block", w.rnd.IntN(volumeBlocks), func(int) bool { return true })
	onto := e.writeSome(w, b, w.writes, func(r *Replica) bool {
		return coupled(w.coupling, crash+" "+r.Name, chance(w.rnd, 0.5), always)
	})
	c.Vol.hist.inFlight(write{id: w.writes, block: b, engine: e, at: w.seconds(), onto: onto})
	if w.trace != nil {
		w.tracef("phys", "%s: write %d to block %d in flight at the crash reached %s", c.Vol.Name, w.writes, b, replicaNames(onto))
	}
}

// inFlightChance is how often a crash catches the gateway mid-write.
const inFlightChance = 0.5
