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
	"container/heap"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// epoch is model time zero of every episode.
var epoch = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// basePeriod is the node monitor period: every component runs at least
// this often; changes make them run again within reactionLatency.
const basePeriod = 5 * time.Second

// World is one episode: the physical state, the API view and the
// components that keep it, on one model clock.
type World struct {
	sc  *Scenario
	rnd *rand.Rand
	// lagRand draws the cache's event delays, apart from rnd so that a
	// replay without cache lag sees the same episode otherwise.
	lagRand *rand.Rand
	start   time.Time
	now     time.Time
	api     *store
	nodes   []*Node
	volumes []*Volume
	writes  int
	nets    int
	// steps and reconciles count work, for the runtime figures.
	steps, reconciles int

	adc   *attachDetach
	nhc   *healthCheck
	far   map[types.UID]*farJob
	admin admin

	// snrAgentState is each node's Self Node Remediation agent.
	snrAgentState map[string]*snrAgent
	// taintedBy is who added each node's out-of-service taint.
	taintedBy map[string]string
	// terminating is when the finalizer's owner saw each pod deleted.
	terminating map[types.UID]time.Time
	// health and taintedSince are kube-controller-manager's memory of
	// node heartbeats and of pods' taints.
	health       map[string]*nodeHealth
	taintedSince map[types.UID]time.Time
	// lastTick is the last period index each periodic component ran at.
	lastTick map[int64]int64
	cuts     cutState
	recreate recreateState
	retaint  retaintState
	// orphanedSince is when Pod GC first found pods bound to each missing
	// Node name (podgc.go).
	orphanedSince map[string]time.Time

	events []event
	faults []*activeFault
	wakes  timeHeap
	// pending dedupes wake times.
	pending map[time.Time]bool
	trace   *trace
	stats   *episodeStats
	// coupling ties a baseline to its operator run (attribution.go).
	coupling *coupling
}

// event is a scripted physical change.
type event struct {
	at   time.Time
	what string
	do   func()
}

func newWorld(sc *Scenario, rnd, lagRand *rand.Rand, tr *trace) *World {
	w := &World{sc: sc, rnd: rnd, lagRand: lagRand, start: epoch, now: epoch, adc: newAttachDetach(), far: map[types.UID]*farJob{},
		admin: admin{offSince: map[string]time.Time{}, tainted: map[string]bool{}}, lastTick: map[int64]int64{}, terminating: map[types.UID]time.Time{}, taintedBy: map[string]string{},
		health: map[string]*nodeHealth{}, taintedSince: map[types.UID]time.Time{}, orphanedSince: map[string]time.Time{},
		retaint: retaintState{tainted: map[string]bool{}, readySince: map[string]time.Time{}},
		pending: map[time.Time]bool{}, trace: tr, stats: &episodeStats{}, snrAgentState: map[string]*snrAgent{}}
	w.api = newStore(scheme, func() time.Time { return w.now }, w.suffix)
	installKinds(w.api, sc.FAR.Installed, sc.SNR != nil)
	w.buildNodes()
	w.nhc = w.newHealthCheck()
	w.buildTemplates()
	for i, in := range sc.Instances {
		w.buildInstance(i, in)
	}
	w.buildInstanceManagers()
	w.buildStaleEvidence()
	for _, f := range sc.Faults {
		w.schedule(f.At, "fault", func() { f.apply(w) })
	}
	w.api.drain()
	w.api.onChange = w.traceChange
	return w
}

// step runs every component once, in a fixed order.
func (w *World) step() {
	w.steps++
	w.runEvents()
	w.physics()
	w.kubelets()
	w.nodeLifecycle()
	w.taintEviction()
	w.podGC()
	w.garbageCollector()
	w.replicaSets()
	w.releaseFinalizers()
	w.scheduler()
	w.attachDetach()
	w.externalAttacher()
	w.longhornNodes()
	w.longhornVolumes()
	w.instanceManagers()
	w.adminReplacesNode()
	w.adminRemediates()
	w.healthChecks()
	w.fenceAgents()
	w.selfNodeRemediation()
	w.adminActs()
	w.adminRemovesRetaint()
}

func (w *World) schedule(after time.Duration, what string, do func()) {
	e := event{at: w.now.Add(after), what: what, do: do}
	w.events = append(w.events, e)
	slices.SortStableFunc(w.events, func(a, b event) int { return a.at.Compare(b.at) })
	w.wakeAt(e.at)
}

func (w *World) runEvents() {
	for len(w.events) > 0 && !w.events[0].at.After(w.now) {
		e := w.events[0]
		w.events = w.events[1:]
		e.do()
	}
}

// wakeAt asks for a step at t.
func (w *World) wakeAt(t time.Time) {
	if t.After(w.now) && !w.pending[t] {
		w.pending[t] = true
		heap.Push(&w.wakes, t)
	}
}

// nextWake is the earliest requested step after now, or the next base tick.
func (w *World) nextWake() time.Time {
	next := w.now.Truncate(basePeriod).Add(basePeriod) // epoch is aligned
	for w.wakes.Len() > 0 && !w.wakes[0].After(w.now) {
		delete(w.pending, heap.Pop(&w.wakes).(time.Time))
	}
	if w.wakes.Len() > 0 && w.wakes[0].Before(next) {
		next = w.wakes[0]
	}
	return next
}

// tick reports whether a period boundary passed since the component last
// ran (steps may jump over an exact boundary).
func (w *World) tick(period int64) bool {
	idx := w.unix() / period
	if idx > w.lastTick[period] {
		w.lastTick[period] = idx
		return true
	}
	return false
}

// version is the world's state identity for the workqueue.
func (w *World) version() version { return version{rv: w.api.rv, steps: w.steps} }

func (w *World) unix() int64            { return int64(w.now.Sub(w.start) / time.Second) }
func (w *World) at(sec int64) time.Time { return w.start.Add(time.Duration(sec) * time.Second) }
func (w *World) seconds() float64       { return w.now.Sub(w.start).Seconds() }

// suffix draws a generateName suffix from the episode's randomness.
func (w *World) suffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[w.rnd.IntN(len(alphabet))]
	}
	return string(b)
}

func (w *World) newNet() int {
	w.nets++
	return w.nets
}

func (w *World) nodeByName(name string) *Node {
	for _, n := range w.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// volumeOfClaim maps an s3gw claim to its volume.
func (w *World) volumeOfClaim(claim string) *Volume {
	for _, v := range w.volumes {
		if claim == "gw"+strconv.Itoa(v.Index)+"-s3gw-pvc" {
			return v
		}
	}
	return nil
}

func (w *World) powerOff(n *Node, why string) {
	if !n.Powered {
		return
	}
	n.powerOff(w)
	w.tracef("phys", "%s powered off (%s)", n.Name, why)
}

func (w *World) powerOn(n *Node) {
	if n.Powered {
		return
	}
	n.powerOn()
	w.tracef("phys", "%s powered on", n.Name)
}

func itoa(i int) string { return strconv.Itoa(i) }

// timeHeap is a min-heap of wake times.
type timeHeap []time.Time

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i].Before(h[j]) }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push implements heap.Interface.
func (h *timeHeap) Push(x any) { *h = append(*h, x.(time.Time)) }

// Pop implements heap.Interface.
func (h *timeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
