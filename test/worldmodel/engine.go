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
	"math/bits"
	"slices"
	"time"
)

// The engine process and the replicas' disks, as longhorn-engine does them
// (github.com/longhorn/longhorn-engine at 5939910cc1fe453c508c440205e81f9c28118c4d;
// files under pkg/). Our own code, written from reading theirs.

// volumeBlocks is how many blocks a volume has: enough for one read to hit
// a stale replica while the next hits a current one, few enough for the
// gateway to read all of them every round.
const volumeBlocks = 4

// disk is what a replica keeps on its node.
type disk struct {
	// blocks hold the ID of the write that last reached each block; 0 is
	// the volume's initial content.
	blocks [volumeBlocks]int
	// rev is the revision counter: pkg/replica/replica.go Replica.WriteAt
	// adds one per write unless the counter is disabled.
	rev int64
	// mtime is the head file's modification time, on the replica node's
	// clock; head is the set of blocks written since the head was created:
	// its file size (Replica.GetReplicaStat). Salvage compares both.
	mtime time.Time
	head  uint8
}

func (d *disk) headSize() int { return bits.OnesCount8(d.head) }

// replicaMode is a replica's mode in the engine (pkg/types: RW, WO, ERR).
type replicaMode uint8

const (
	modeRW replicaMode = iota
	modeWO
	modeERR
)

func (m replicaMode) String() string { return [...]string{"RW", "WO", "ERR"}[m] }

// engineReplica is a replica process the engine was given, and its mode.
type engineReplica struct {
	r    *Replica
	inc  int
	mode replicaMode
}

// Engine is an engine process.
type Engine struct {
	Seq     int
	Node    *Node
	Running bool
	vol     *Volume
	reps    []engineReplica
	// rebuildDone is when the WO replica's sync finishes; nextPoll is when
	// its manager's monitor next reads its replica modes.
	rebuildDone, nextPoll time.Time
	// StartedAt is the model time in seconds it started.
	StartedAt float64
	// startRW are the replicas Start left RW; salvage is whether it was
	// started with salvageRequested.
	startRW []*Replica
	salvage bool
	// cutOff are the replicas it was given and could not open only
	// because the data path between the two nodes was cut, both powered
	// and reaching the API server: what no API object shows.
	cutOff []*Replica
}

// startEngine is pkg/controller/control.go Controller.Start: every address
// is opened; one that answers is added RW, the others ERR. Then, unless the
// revision counter is disabled, checkReplicasRevisionCounter marks every RW
// replica whose counter is below the highest ERR; with it disabled nothing
// is compared unless salvage was requested, and then
// salvageRevisionCounterDisabledReplicas keeps one. It fails (the process
// exits) when no replica answers. addresses come from a map in
// longhorn-manager: their order is arbitrary.
func startEngine(w *World, v *Volume, node *Node, addresses []*Replica, salvage bool) *Engine {
	e := &Engine{Seq: len(v.Engines), Node: node, vol: v, StartedAt: w.seconds(), salvage: salvage}
	rw := 0
	for _, r := range addresses {
		ref := engineReplica{r: r, inc: r.Inc, mode: modeERR}
		switch {
		case e.reaches(ref):
			ref.mode = modeRW
			rw++
		case r.Running && node.Powered && r.Node.Powered && node.CP && r.Node.CP:
			e.cutOff = append(e.cutOff, r)
		}
		e.reps = append(e.reps, ref)
	}
	if rw == 0 {
		return e // "no backend available": not running
	}
	e.Running = true
	e.startChecks(salvage)
	return e
}

// startChecks are Start's checks once the replicas are open.
func (e *Engine) startChecks(salvage bool) {
	switch {
	case !e.vol.RevisionCounterDisabled:
		e.checkReplicasRevisionCounter()
	case salvage:
		e.salvageRevisionCounterDisabledReplicas()
	}
	for _, ref := range e.reps {
		if ref.mode == modeRW {
			e.startRW = append(e.startRW, ref.r)
		}
	}
}

// checkReplicasRevisionCounter marks every RW replica whose counter is not
// the highest ERR ("Revision conflict detected").
func (e *Engine) checkReplicasRevisionCounter() {
	var highest int64
	for _, ref := range e.reps {
		if ref.mode == modeRW && ref.r.disk.rev > highest {
			highest = ref.r.disk.rev
		}
	}
	for i := range e.reps {
		if e.reps[i].mode == modeRW && e.reps[i].r.disk.rev != highest {
			e.reps[i].mode = modeERR
		}
	}
}

// salvageLastModifyWindow is lastModifyCheckPeriod in pkg/controller/control.go.
const salvageLastModifyWindow = 5 * time.Second

// salvageRevisionCounterDisabledReplicas keeps one RW replica: among those
// modified within 5 s of the latest head modification (each on its own
// node's clock), the largest head file, then the latest modification; the
// first in address order wins a tie.
func (e *Engine) salvageRevisionCounterDisabledReplicas() {
	var latest time.Time
	for _, ref := range e.reps {
		if ref.mode == modeRW && (latest.IsZero() || ref.r.disk.mtime.After(latest)) {
			latest = ref.r.disk.mtime
		}
	}
	best := -1
	for i, ref := range e.reps {
		d := &ref.r.disk
		if ref.mode != modeRW || !d.mtime.Add(salvageLastModifyWindow).After(latest) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := &e.reps[best].r.disk
		if d.headSize() > b.headSize() || (d.headSize() == b.headSize() && d.mtime.After(b.mtime)) {
			best = i
		}
	}
	for i := range e.reps {
		if i != best {
			e.reps[i].mode = modeERR
		}
	}
}

// reaches reports whether the engine can still use a replica process.
func (e *Engine) reaches(ref engineReplica) bool {
	r := ref.r
	return r.Running && r.Inc == ref.inc && r.Node.Powered && linked(e.Node, r.Node)
}

// mode is a replica's mode in the engine, and whether the engine has it.
func (e *Engine) mode(r *Replica) (replicaMode, bool) {
	for _, ref := range e.reps {
		if ref.r == r {
			return ref.mode, true
		}
	}
	return modeERR, false
}

func (e *Engine) hasMode(m replicaMode) bool {
	for _, ref := range e.reps {
		if ref.mode == m {
			return true
		}
	}
	return false
}

// monitorReplicas is Controller.monitoring: a replica whose connection
// fails (the process stopped or restarted, the data path broke) goes ERR,
// and stays so; only longhorn-manager adds replicas back, by rebuilding.
func (e *Engine) monitorReplicas() {
	for i := range e.reps {
		if e.reps[i].mode != modeERR && !e.reaches(e.reps[i]) {
			e.reps[i].mode = modeERR
		}
	}
}

// write is Controller.WriteAt: MultiWriterAt writes to every RW and WO
// replica; handleErrorNoLock sets each that failed ERR and acknowledges the
// write if a replica is still RW (a WO replica's success does not count).
func (e *Engine) write(w *World, b, id int) (onto []*Replica, acked bool) {
	for i := range e.reps {
		ref := &e.reps[i]
		if ref.mode == modeERR {
			continue
		}
		if !e.reaches(*ref) {
			ref.mode = modeERR
			continue
		}
		e.apply(w, ref.r, b, id)
		onto = append(onto, ref.r)
		acked = acked || ref.mode == modeRW
	}
	return onto, acked
}

// writeSome is a write cut short by a crash: it lands on the replicas
// lands picks, of those the engine still writes to.
func (e *Engine) writeSome(w *World, b, id int, lands func(*Replica) bool) []*Replica {
	var onto []*Replica
	for _, ref := range e.reps {
		if ref.mode != modeERR && e.reaches(ref) && lands(ref.r) {
			e.apply(w, ref.r, b, id)
			onto = append(onto, ref.r)
		}
	}
	return onto
}

func (e *Engine) apply(w *World, r *Replica, b, id int) {
	d := &r.disk
	d.blocks[b] = id
	if !e.vol.RevisionCounterDisabled {
		d.rev++
	}
	d.mtime = w.nodeClock(r.Node)
	d.head |= 1 << b
}

// read is Controller.ReadAt over pkg/controller/replicator.go ReadAt: the
// readers are the RW replicas (built from a map, so in no fixed order);
// each read starts at the next one and moves on past any that fail, which
// handleError then sets ERR. Writes never go through WO replicas' reads.
func (e *Engine) read(w *World, b int) (got int, from *Replica, ok bool) {
	var readers []int
	for i, ref := range e.reps {
		if ref.mode == modeRW {
			readers = append(readers, i)
		}
	}
	if len(readers) == 0 {
		return 0, nil, false
	}
	start := w.rnd.IntN(len(readers))
	for k := range readers {
		ref := &e.reps[readers[(start+k)%len(readers)]]
		if !e.reaches(*ref) {
			ref.mode = modeERR
			continue
		}
		return ref.r.disk.blocks[b], ref.r, true
	}
	return 0, nil, false
}

// addRebuild starts rebuilding a replica (pkg/sync/sync.go Task.AddReplica):
// the engine takes a snapshot on every replica (a new, empty head each),
// adds the replica WO (Controller.AddReplica: one WO replica at a time),
// PrepareRebuildReplica zeroes its counter, and the snapshot's blocks are
// copied from the RW replicas (getTransferClients: any of them). Writes
// reach it from now on; it turns RW when the sync finishes (finishRebuild).
func (e *Engine) addRebuild(w *World, r *Replica, took time.Duration) bool {
	ref := engineReplica{r: r, inc: r.Inc, mode: modeWO}
	if _, has := e.mode(r); has || e.hasMode(modeWO) || !e.hasMode(modeRW) || !e.reaches(ref) {
		return false
	}
	var sources []*Replica
	for _, s := range e.reps {
		if s.mode == modeRW && e.reaches(s) {
			sources = append(sources, s.r)
		}
		if s.mode != modeERR {
			s.r.disk.head = 0
		}
	}
	if len(sources) == 0 {
		return false
	}
	d := &r.disk
	for b := range volumeBlocks {
		from := sources[w.rnd.IntN(len(sources))]
		name := coupled(w.coupling, "rebuild source "+r.Name, from.Name, func(name string) bool {
			return slices.ContainsFunc(sources, func(s *Replica) bool { return s.Name == name })
		})
		from = sources[slices.IndexFunc(sources, func(s *Replica) bool { return s.Name == name })]
		d.blocks[b] = from.disk.blocks[b]
	}
	d.rev, d.head, d.mtime = 0, 0, w.nodeClock(r.Node)
	e.reps = append(e.reps, ref)
	e.rebuildDone = w.now.Add(took)
	w.wakeAt(e.rebuildDone)
	return true
}

// finishRebuild is Controller.VerifyRebuildReplica once the sync is done:
// the WO replica takes the counter of an RW replica (the last in the
// engine's list) and turns RW.
func (e *Engine) finishRebuild(w *World) {
	if w.now.Before(e.rebuildDone) {
		return
	}
	wo, rw := -1, -1
	for i, ref := range e.reps {
		switch ref.mode {
		case modeWO:
			wo = i
		case modeRW:
			rw = i
		}
	}
	if wo < 0 || rw < 0 {
		return
	}
	if !e.vol.RevisionCounterDisabled {
		e.reps[wo].r.disk.rev = e.reps[rw].r.disk.rev
	}
	e.reps[wo].mode = modeRW
	w.tracef("longhorn", "%s: replica %s rebuilt by engine e%d", e.vol.Name, e.reps[wo].r.Name, e.Seq)
}

// remove is Controller.RemoveReplica, which longhorn-manager calls for a
// replica it marked failed.
func (e *Engine) remove(r *Replica) {
	for i, ref := range e.reps {
		if ref.r == r {
			e.reps = append(e.reps[:i], e.reps[i+1:]...)
			return
		}
	}
}
