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
	"strings"
)

// The invariant is physical: once everything is healed and settled, every
// write any engine acknowledged is in the volume's authoritative data.

// violation is one volume's lost acknowledged writes.
type violation struct {
	volume   string
	lost     int
	category string
	// operator: the controller made a destructive write before the engine
	// that lost the writes started. Losses without one are Longhorn's and
	// the fencers' own (reported, not counted).
	operator bool
	detail   string
}

func (w *World) checkWrites() []violation {
	var out []violation
	for _, v := range w.volumes {
		have := map[int]bool{}
		for _, id := range w.authoritative(v) {
			have[id] = true
		}
		var lost []ack
		for _, a := range v.acked {
			if !have[a.id] {
				lost = append(lost, a)
			}
		}
		if len(lost) > 0 {
			out = append(out, w.explain(v, lost))
		}
	}
	return out
}

// authoritative is the data Longhorn serves: the running engine's, else
// what the next attach would start from.
func (w *World) authoritative(v *Volume) []int {
	if e := v.current; e != nil && e.Running && len(e.Set) > 0 {
		return e.data()
	}
	candidates := w.startable(v)
	if len(candidates) == 0 {
		candidates = v.Replicas
	}
	var best []int
	for _, r := range candidates {
		if len(r.Data) > len(best) {
			best = r.Data
		}
	}
	return best
}

// explain attributes the first lost write to the failover that forked
// the volume's history: the first engine started elsewhere after the one
// that acknowledged it (or, when the old history won, that engine's own
// start), and whether an operator write came before that engine started.
func (w *World) explain(v *Volume, lost []ack) violation {
	a := lost[0]
	fork := w.fork(v, a.engine)
	vi := violation{volume: v.Name, lost: len(lost)}
	if fork == nil {
		vi.category, vi.operator = "write lost without a failover", true
		return vi
	}
	var act *operatorAct
	for i := range w.stats.acts[v.Index] {
		if x := &w.stats.acts[v.Index][i]; x.at <= fork.StartedAt && couldRelease(x, a.engine, fork) {
			act = x
		}
	}
	vi.operator = act != nil
	if fork == a.engine {
		vi.category = "new engine's writes discarded for an old replica's divergent data"
	} else {
		vi.category = category(a, fork, act, w.stats.fencedBetween(a.engine.Node.Name, a.at, fork.StartedAt))
	}
	vi.detail = fmt.Sprintf("%s: %d acknowledged write(s) lost; first: write %d acked at %.1fs by engine e%d on %s onto %s; "+
		"engine e%d started on %s at %.1fs", v.Name, len(lost), a.id, a.at, a.engine.Seq, a.engine.Node.Name, replicaNames(a.onto),
		fork.Seq, fork.Node.Name, fork.StartedAt)
	if act != nil {
		vi.detail += fmt.Sprintf("; last operator write before it: %s on %s at %.1fs (evidence %v)", act.what, act.node, act.at, act.evidence)
	}
	return vi
}

// couldRelease is whether an operator write can have moved the volume away
// from engine e. Every write of a remediation (a pod force-delete, a
// release) concerns the attachment on its own node, so only a write on e's
// node can have released e; one that may still hold when e ran (an
// out-of-service taint outlives the failure it was added for) counts too.
// A write for another node only moved a pod that was waiting for the volume,
// whatever released e. When e's own writes were discarded (fork == e),
// every earlier write counts.
func couldRelease(x *operatorAct, e, fork *Engine) bool {
	return fork == e || x.node == e.Node.Name
}

// fork is the engine start that split the history a lost write of e
// belongs to.
func (w *World) fork(v *Volume, e *Engine) *Engine {
	for _, next := range v.Engines[e.Seq+1:] {
		if next.Node != e.Node {
			return next
		}
	}
	for i := e.Seq; i > 0; i-- {
		if v.Engines[i-1].Node != e.Node {
			return v.Engines[i]
		}
	}
	return nil
}

func category(a ack, next *Engine, act *operatorAct, fenced bool) string {
	where := "old engine acked to the failed node's own replica"
	for _, r := range a.onto {
		if r.Node != a.engine.Node {
			where = "old engine acked to a replica on another node Longhorn did not stop"
		}
	}
	var when string
	switch {
	case fenced:
		when = "acked before the old node was fenced"
	case act != nil && act.staleEvidence:
		when = "old node still running; evidence older than the failure present"
	default:
		when = "old node still running"
	}
	if a.at >= next.StartedAt {
		when += ", two engines acked at once"
	}
	return where + "; " + when
}

func replicaNames(rs []*Replica) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name[strings.LastIndex(r.Name, "-r-")+1:] + "@" + r.Node.Name
	}
	return strings.Join(names, ",")
}
