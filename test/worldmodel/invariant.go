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
	"strings"
)

// The invariant is what the gateway reads. Every read of a block returns
// the last value acknowledged for it, or a write that was in flight at a
// crash after that (crash consistency allows either); and until the block
// is written again, every read returns the same value as the first. The gateway reads
// every block each round, and once everything is healed and settled every
// block is read from every replica the volume is served from.

// write is one write the gateway sent.
type write struct {
	id     int
	block  int
	engine *Engine
	at     float64
	onto   []*Replica
	acked  bool
}

// history is what the gateway was told about its volume, and what its
// reads returned.
type history struct {
	// last is the last acknowledged write of each block (id 0: the initial
	// content); pending are writes sent after it and never acknowledged.
	last    [volumeBlocks]write
	pending [volumeBlocks][]write
	// seen is the value reads returned since last (-1: none yet).
	seen [volumeBlocks]int
	// acks are all acknowledged writes, in order; byID every write sent.
	acks []write
	byID map[int]write
	bad  []badRead
	// exposed are the blocks (with the acknowledged value each should
	// return) that some replica an engine served could have returned
	// wrongly: the gateway's reads, every block from every replica,
	// without the luck of which replica a read picks. exposedAt is when
	// the first was, exposedFrom when the oldest acknowledged write a
	// wrong value lacks was acknowledged (model seconds): how far back the
	// loss reaches.
	// Attribution compares two runs by them.
	exposed                map[[2]int]bool
	exposedAt, exposedFrom float64
}

// badRead is a read that broke the invariant.
type badRead struct {
	at      float64
	block   int
	got     int
	want    write
	engine  *Engine
	replica *Replica
	// before is the different value an earlier read returned, or -1.
	before int
}

func newHistory(first *Engine) history {
	h := history{byID: map[int]write{}, exposed: map[[2]int]bool{}}
	for b := range volumeBlocks {
		h.last[b] = write{block: b, engine: first, acked: true}
		h.seen[b] = -1
	}
	return h
}

func (h *history) acked(w write) {
	w.acked = true
	h.last[w.block], h.pending[w.block], h.seen[w.block] = w, nil, -1
	h.acks = append(h.acks, w)
	h.byID[w.id] = w
}

// inFlight records a write that was never acknowledged: from now on a
// read may return it or the last acknowledged value, whichever the first
// read after it returns.
func (h *history) inFlight(w write) {
	h.pending[w.block], h.seen[w.block] = append(h.pending[w.block], w), -1
	h.byID[w.id] = w
}

// allows reports whether a read of block b may return got: the last
// acknowledged value or a write in flight at a crash since.
func (h *history) allows(b, got int) bool {
	allowed := got == h.last[b].id
	for _, p := range h.pending[b] {
		allowed = allowed || got == p.id
	}
	return allowed
}

// expose reads every block from every replica engine e serves, as reads
// would without their luck, and records each block a read could get
// wrong: a value not allowed, one other than the first read returned, or
// replicas that disagree. How far back it reaches is when the first
// acknowledged write the wrong value lacks was acknowledged (for
// replicas that disagree on values a read may return, the last
// acknowledged one's). The gateway's reads pass over replicas the engine
// no longer reaches; the final reads, of an engine that may not run yet,
// read every RW one (settled). It changes nothing a read would.
func (w *World) expose(v *Volume, e *Engine, settled bool) {
	h := &v.hist
	for b := range volumeBlocks {
		if h.exposed[[2]int{b, h.last[b].id}] {
			continue
		}
		wrong, from, first := false, 0.0, -1
		for _, ref := range e.reps {
			if ref.mode != modeRW || (!settled && !e.reaches(ref)) {
				continue
			}
			got, since := ref.r.disk.blocks[b], -1.0
			switch {
			case !h.allows(b, got):
				since = h.ackedAfter(b, got)
			case (h.seen[b] >= 0 && got != h.seen[b]) || (first >= 0 && got != first):
				since = h.last[b].at
			}
			if since >= 0 && (!wrong || since < from) {
				wrong, from = true, since
			}
			first = got
		}
		if wrong {
			if len(h.exposed) == 0 {
				h.exposedAt, h.exposedFrom = w.seconds(), from
			}
			h.exposed[[2]int{b, h.last[b].id}] = true
			h.exposedFrom = min(h.exposedFrom, from)
		}
	}
}

// ackedAfter is when the first acknowledged write to block b after the
// write got was acknowledged: the oldest a read of got loses.
func (h *history) ackedAfter(b, got int) float64 {
	for _, a := range h.acks {
		if a.block == b && a.id > got {
			return a.at
		}
	}
	return h.last[b].at
}

// checkRead records a read of block b that returned got from replica r
// through engine e.
func (w *World) checkRead(v *Volume, e *Engine, r *Replica, b, got int) {
	h := &v.hist
	switch {
	case !h.allows(b, got):
		h.bad = append(h.bad, badRead{at: w.seconds(), block: b, got: got, want: h.last[b], engine: e, replica: r, before: -1})
	case h.seen[b] >= 0 && h.seen[b] != got:
		h.bad = append(h.bad, badRead{at: w.seconds(), block: b, got: got, want: h.last[b], engine: e, replica: r, before: h.seen[b]})
	default:
		h.seen[b] = got
	}
}

// finalReads reads every block from every replica the volume is served
// from once settled: the running engine's RW replicas, else those the
// next engine would start with (longhorn-manager's choice, then
// Controller.Start's checks, salvage included).
func (w *World) finalReads(v *Volume) {
	e := v.current
	if e == nil || !e.Running {
		e = w.nextEngine(v)
	}
	if e == nil {
		return // nothing can be served: unavailable, not wrong
	}
	w.expose(v, e, true)
	for range 2 {
		for b := range volumeBlocks {
			for _, ref := range e.reps {
				if ref.mode == modeRW {
					w.checkRead(v, e, ref.r, b, ref.r.disk.blocks[b])
				}
			}
		}
	}
}

// nextEngine is the engine the next attach would start, every node being
// reachable: the replicas not failed, or (auto-salvage, when the setting
// is on) those that were healthy once and failed within a minute of the
// last, with salvage.
func (w *World) nextEngine(v *Volume) *Engine {
	var candidates []*Replica
	for _, r := range v.Replicas {
		if w.api.longhornReplica(r.Name).Spec.FailedAt == "" {
			candidates = append(candidates, r)
		}
	}
	salvage := v.salvageRequested || len(candidates) == 0
	if len(candidates) == 0 && !w.sc.Neighbours.AutoSalvageOff {
		candidates = w.salvageCandidates(v)
	}
	if len(candidates) == 0 {
		return nil
	}
	e := &Engine{Seq: len(v.Engines), Node: candidates[0].Node, vol: v, StartedAt: w.seconds(), salvage: salvage}
	for _, r := range candidates {
		e.reps = append(e.reps, engineReplica{r: r, inc: r.Inc, mode: modeRW})
	}
	e.startChecks(salvage)
	return e
}

// violation is one volume's reads that broke the invariant, or another
// breach of the operator's rules (index -1).
type violation struct {
	volume string
	// index is the volume's; -1 for a breach that concerns no volume.
	index int
	// bad counts the reads that broke it; first is when the first one
	// came, and since when the engine that acknowledged the oldest value
	// a bad read failed to return started (model seconds).
	bad      int
	first    float64
	since    float64
	category string
	// class is the class docs/safety.md §7 documents the loss as, should
	// replay charge it to the operator, or "" (attribution.go); hand says
	// whether an operator write took part in the moves it came from: one
	// of its destructive writes or its delegate (movingAct, the delegate's
	// classes).
	class  string
	hand   bool
	detail string
}

func (w *World) checkReads() []violation {
	var out []violation
	for _, v := range w.volumes {
		w.finalReads(v)
		if len(v.hist.bad) > 0 {
			out = append(out, w.explain(v))
		}
	}
	return out
}

// explain names the cause of a volume's first bad read and whether an
// operator write led to it.
func (w *World) explain(v *Volume) violation {
	h := &v.hist
	bad := h.bad[0]
	served, want := bad.engine, bad.want
	vi := violation{volume: v.Name, index: v.Index, bad: len(h.bad), first: bad.at, since: lostSince(h.bad)}
	involved := []*Engine{want.engine}
	if gotW, ok := h.byID[bad.got]; ok {
		involved = append(involved, gotW.engine)
	}
	after := served
	if old, young := splitBrain(h); old != nil {
		vi.category = "two engines acknowledged writes at once (split brain)"
		involved, after = []*Engine{old, young}, young
	} else {
		vi.category = mechanism(h, bad, want)
	}
	if v.RevisionCounterDisabled {
		vi.category += "; revision counter disabled"
	}
	act := w.movingAct(v, involved, after)
	vi.class = lossClassOf(v, bad, want)
	vi.hand = act != nil || byDelegate(v, bad, want)
	vi.detail = fmt.Sprintf("%s: %d bad read(s); first at %.1fs: block %d read %d from replica %s through engine e%d on %s "+
		"(started %.1fs, RW at start %s, salvage %v); last acknowledged: write %d by engine e%d on %s at %.1fs onto %s",
		v.Name, len(h.bad), bad.at, bad.block, bad.got, replicaName(bad.replica), served.Seq, served.Node.Name,
		served.StartedAt, replicaNames(served.startRW), served.salvage, want.id, want.engine.Seq, want.engine.Node.Name,
		want.at, replicaNames(want.onto))
	if bad.before >= 0 {
		vi.detail += fmt.Sprintf("; an earlier read returned %d", bad.before)
	}
	if act != nil {
		vi.detail += fmt.Sprintf("; operator write before it: %s on %s at %.1fs (evidence %v)", act.what, act.node, act.at, act.evidence)
	}
	return vi
}

// lostSince is when the engine that acknowledged the oldest value a bad
// read failed to return started.
func lostSince(bad []badRead) float64 {
	since := bad[0].want.engine.StartedAt
	for _, b := range bad {
		since = min(since, b.want.engine.StartedAt)
	}
	return since
}

// mechanism says how a read that is not a split brain went wrong.
func mechanism(h *history, bad badRead, want write) string {
	served := bad.engine
	if bad.before >= 0 {
		for _, v := range []int{bad.got, bad.before} {
			if p, ok := h.byID[v]; ok && !p.acked {
				return "a write in flight at a crash reached some replicas only, and both were served"
			}
		}
		return "a block returned two different values"
	}
	if p, ok := h.byID[bad.got]; ok && !p.acked {
		return "a write in flight at an earlier crash was served after a newer acknowledged one"
	}
	holds := func(rs []*Replica) bool {
		for _, r := range rs {
			for _, o := range want.onto {
				if r == o {
					return true
				}
			}
		}
		return false
	}
	switch {
	case served.salvage:
		return "salvage started the engine from a replica without acknowledged writes"
	case !holds(served.startRW):
		return "acknowledged writes on no replica the new engine started with"
	case !holds([]*Replica{bad.replica}):
		return "a replica without acknowledged writes served beside replicas with them"
	default:
		return "a replica lost acknowledged writes it held (rebuilt from a replica without them)"
	}
}

// splitBrain finds two engines that both acknowledged writes: an older one
// that acknowledged after a younger one started and acknowledged.
func splitBrain(h *history) (old, young *Engine) {
	firstAck := map[*Engine]float64{}
	for _, a := range h.acks {
		if _, ok := firstAck[a.engine]; !ok {
			firstAck[a.engine] = a.at
		}
	}
	for _, a := range h.acks {
		for e, first := range firstAck {
			if e.Seq > a.engine.Seq && first <= a.at && (young == nil || e.Seq < young.Seq) {
				old, young = a.engine, e
			}
		}
		if old != nil {
			return old, young
		}
	}
	return nil, nil
}

// movingAct is the last operator write that can have moved the volume
// between the engines involved before after started (a destructive write,
// or the creation of a delegate fencing CR, whose fencer releases the
// volume by its own recovery): a loss replay does not reproduce without
// the operator is its doing only if one took part (attribution.go). One
// concerning the
// attachment on the node of an involved engine, when the engines involved
// did not all run on one node (a restart in place is Longhorn's own), made
// once the first of them (the one whose acknowledged write was lost, or
// the older of a split brain) had started. A write before that moved the
// volume onto that engine, which then held what it acknowledged: losing it
// later took a move of its own (a double failure that auto-salvage
// serves from an older replica is Longhorn's: volume_controller.go
// ReconcileVolumeState salvages only replicas that were healthy once).
func (w *World) movingAct(v *Volume, involved []*Engine, after *Engine) *operatorAct {
	nodes := map[string]bool{after.Node.Name: true}
	for _, e := range involved {
		nodes[e.Node.Name] = true
	}
	if len(nodes) < 2 {
		return nil
	}
	var act *operatorAct
	for _, x := range slices.Concat(w.stats.acts[v.Index], w.stats.delegations[v.Index]) {
		if x.at > after.StartedAt || x.at < involved[0].StartedAt {
			continue
		}
		for _, e := range involved {
			if x.node == e.Node.Name && (act == nil || x.at >= act.at) {
				act = &x
			}
		}
	}
	return act
}

func replicaName(r *Replica) string {
	if r == nil {
		return "-"
	}
	return r.Name[strings.LastIndex(r.Name, "-r-")+1:] + "@" + r.Node.Name
}

func replicaNames(rs []*Replica) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = replicaName(r)
	}
	return "[" + strings.Join(names, ",") + "]"
}
