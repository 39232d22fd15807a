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
	"time"
)

// settleDuration is how long everything runs healed before the final
// reads: kubelets kill what the API deleted, nodes turn Ready, Longhorn
// stops stale engines and rebuilds stale replicas, and the controller
// keeps running meanwhile.
const settleDuration = 3 * time.Minute

// result is what one episode showed.
type result struct {
	violations  []violation
	destructive bool
	succeeded   bool
	moved       bool
	steps       int
	reconciles  int
	trace       *trace
	// exposures are the volumes whose replicas could have served a wrong
	// read (history.exposed), for attribution.
	exposures []exposure
	// coupling is what its baseline shares with it (attribution.go);
	// neighbours are the episode's settings.
	coupling   *coupling
	neighbours NeighbourSettings
}

// exposure is one volume's: since when (model seconds), and how far back:
// when the oldest value exposed was acknowledged.
type exposure struct {
	index    int
	at, from float64
}

// episodeRand is the randomness of episode i of a run: the scenario and
// everything that happens in it; lagRand draws the informer cache's delays;
// lateRand draws the parts of the scenario added after the fixed seed's
// figures were taken (generate), so that the other draws and everything
// that happens in an episode stay as they were.
func episodeRand(seed uint64, i int) (rnd, lagRand, lateRand *rand.Rand) {
	return rand.New(rand.NewPCG(seed, uint64(i))), rand.New(rand.NewPCG(^seed, uint64(i))),
		rand.New(rand.NewPCG(seed, ^uint64(i)))
}

// runEpisode draws and plays one episode with the operator acting; tr
// (may be nil) records it.
func runEpisode(seed uint64, i int, p Policy, tr *trace) result {
	return playEpisode(seed, i, p, newCoupling(), tr)
}

// runBaseline plays the same episode with the operator installed and
// acting until since (model seconds; 0: never), then never again: the
// same draws, NHC creating its CRs, nobody reconciling them, coupled to
// the operator's run (c, its result's coupling).
func runBaseline(seed uint64, i int, p Policy, c *coupling, since float64, tr *trace) result {
	return playEpisode(seed, i, p, c.baseline(since), tr)
}

func playEpisode(seed uint64, i int, p Policy, c *coupling, tr *trace) result {
	rnd, lagRand, lateRand := episodeRand(seed, i)
	sc := generate(rnd, lateRand, p)
	var quitsAt *time.Time
	if c.replay {
		quit := epoch.Add(c.quitAfter)
		quitsAt = &quit
		sc.Faults = slices.Clone(sc.Faults)
		for _, s := range c.strikes {
			if s.at >= c.quitAfter {
				sc.Faults = append(sc.Faults, s.fault)
			}
		}
	}
	w := newWorld(sc, rnd, lagRand, tr)
	w.coupling = c
	w.describe()
	m := newManager(w, quitsAt)
	w.run(m, w.start.Add(sc.Duration))
	w.healAll()
	w.run(m, w.start.Add(sc.Duration+settleDuration))
	if !c.replay {
		c.strikes = w.cuts.struck
	}
	violations := w.checkReads()
	for _, t := range w.stats.foreignTaints {
		violations = append(violations, violation{category: "operator removed an out-of-service taint it did not add",
			index: -1, hand: true, detail: t})
	}
	var exposures []exposure
	for _, v := range w.volumes {
		if h := &v.hist; len(h.exposed) > 0 {
			exposures = append(exposures, exposure{index: v.Index, at: h.exposedAt, from: h.exposedFrom})
		}
	}
	return result{violations: violations, destructive: len(w.stats.acts) > 0, succeeded: w.stats.succeeded,
		moved: w.stats.moved, steps: w.steps, reconciles: w.reconciles, trace: tr, exposures: exposures,
		coupling: c, neighbours: sc.Neighbours}
}

// run steps the world at its wakes (requested, base ticks) and runs the
// manager after each step and at its own due times.
func (w *World) run(m *manager, until time.Time) {
	for {
		next := w.nextWake()
		worldDue := true
		if due, ok := m.next(); ok && due.Before(next) {
			next, worldDue = due, false
		}
		if !next.After(w.now) {
			next = w.now.Add(time.Millisecond)
		}
		if next.After(until) {
			return
		}
		w.now = next
		changes := w.api.reactive
		if worldDue {
			w.step()
		}
		m.dispatch()
		if w.api.reactive != changes {
			w.wakeAt(w.now.Add(between(w.rnd, 100*time.Millisecond, time.Second)))
		}
	}
}

// interleave lets the rest of the cluster move on a little between two
// calls of the controller.
func (w *World) interleave() {
	if w.sc.InterleaveRate == 0 || w.rnd.Float64() >= w.sc.InterleaveRate {
		return
	}
	w.now = w.now.Add(between(w.rnd, 10*time.Millisecond, 500*time.Millisecond))
	w.step()
}

// healAll ends every fault: power, kubelets, runtimes and networks.
func (w *World) healAll() {
	w.tracef("phys", "healing everything")
	w.faults = nil
	for _, n := range w.nodes {
		n.fencedOff = false
	}
	w.applyFaults()
}

// describe puts the scenario at the top of the trace.
func (w *World) describe() {
	if w.trace == nil {
		return
	}
	sc := w.sc
	for i, in := range sc.Instances {
		reps := ""
		for _, r := range w.volumes[i].Replicas {
			reps += " " + r.Node.Name
		}
		w.tracef("setup", "s3gw gw%d on %s, volume %s, replicas on%s, revision counter disabled %v", i,
			w.nodes[in.Node].Name, w.volumes[i].Name, reps, in.RevisionCounterDisabled)
	}
	w.tracef("setup", "clock skews %+v; cache lag up to %s", sc.Clocks, sc.CacheLag)
	w.tracef("setup", "template spec: %s", specString(sc.Spec))
	w.tracef("setup", "NHC %+v; FAR %+v; admin %+v", sc.NHC, sc.FAR, sc.Admin)
	if sc.Manual != nil {
		w.tracef("setup", "an admin's own remediation %s after NHC's: %s", sc.Manual.After, specString(sc.Manual.Spec))
	}
	w.tracef("setup", "stale evidence %+v; crash rate %.2f; interleave rate %.2f", sc.Stale, sc.CrashRate, sc.InterleaveRate)
	w.tracef("setup", "neighbours: %s", sc.Neighbours)
	for _, f := range sc.Faults {
		w.tracef("setup", "at +%s: %s", f.At, f)
	}
	if r := sc.Retaint; r != nil {
		w.tracef("setup", "an admin puts back an out-of-service taint a fencer removed from a node still off, %s later, "+
			"timeAdded %t, removing it %s after the node is Ready", r.After, r.TimeAdded, r.Lingers)
	}
	if r := sc.Recreate; r != nil {
		w.tracef("setup", "an admin replaces node %s after %s NotReady, re-creating it %s later", w.nodes[r.Node].Name, r.After, r.Gap)
	}
}
