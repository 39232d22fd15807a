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
	"time"
)

// Whose loss is it? An episode that lost writes is played again with the
// operator installed but not acting (runBaseline): the same seed and
// hazards, NHC creating its CRs and nobody reconciling them. Kubernetes,
// Longhorn and the fencers then do what they do alone: the attach-detach
// controller's 6-minute force detach, auto-salvage, a fencer's release, a
// kubelet that returns. A volume's loss is the operator's when, without
// it, the volume exposes nothing, exposes it later, or exposes less: only
// values acknowledged later (the loss reaches back less far); otherwise
// the baseline shares it. A loss the
// baseline has and the operator's run does not is one the operator
// prevented.
//
// "Without it" starts where the lost writes do: the baseline's operator
// acts as in the first run until the engine that acknowledged the oldest
// lost value started, and never after (since 0 for the volume's first
// engine: it never acts). The writes of an engine the operator's own
// failover started exist only because it did; losing them is its doing
// only if what it did afterwards lost them.
//
// The two runs are one episode only until the operator's first call (or
// until the baseline's operator quits): from there its writes, crashes
// and the other components' reactions draw different numbers. The
// components' decisive draws are coupled (coupling), and a loss both runs
// share can still come a few seconds apart, so "later" means by more
// than sameLossSlack.

// sameLossSlack is the longest backoff of the model's retry loops, the
// engine start's: the components' reaction latencies (0.1-1 s), the
// gateway's I/O rounds and a retry move a loss both runs share by seconds;
// a release that differs moves it by minutes.
const sameLossSlack = engineRetryMax

// verdict is how an episode's losses compare with its baseline's, from
// least to most the operator's.
type verdict int

const (
	// lossless: neither run lost a write.
	lossless verdict = iota
	// baselineOnly: without the operator writes are lost, with it not.
	baselineOnly
	// shared: both runs lose, the baseline no later and no less.
	shared
	// notItsMove: the operator's run loses what the baseline does not,
	// sooner, or more, but no operator write took part in the moves the
	// loss came from (violation.hand): the neighbours released and
	// served it, in a world the operator changed only by what it reported
	// (NHC reads its CRs' Succeeded and times them out).
	notItsMove
	// operatorCaused: the operator's run loses what the baseline does
	// not, sooner, or more, and its writes took part.
	operatorCaused
)

func (v verdict) String() string {
	return [...]string{"lossless", "baseline-only", "shared with the baseline",
		"not reproduced without the operator, in no move of its own", "operator-caused"}[v]
}

// attribution is an episode's verdict, its losses one by one, and why.
type attribution struct {
	verdict verdict
	losses  []judgedLoss
}

// judgedLoss is one volume's loss (or a breach that concerns no volume)
// with its verdict; class is the documented unsignalled class of an
// operator-caused one, "" for none.
type judgedLoss struct {
	verdict  verdict
	category string
	class    string
	why      string
}

// failing reports whether the episode fails the run: an operator-caused
// loss in no documented class.
func (a attribution) failing() bool {
	return slices.ContainsFunc(a.losses, func(l judgedLoss) bool { return l.verdict == operatorCaused && l.class == "" })
}

// attribute compares an episode's run with its baselines, volume by
// volume: a loss of one run (reads that broke the invariant) against the
// other's exposure of that volume (history.exposed), so that neither side
// rests on which replica a read happened to pick. base plays the baseline
// whose operator quits after since; a loss is judged against the one that
// quits when its oldest lost value's engine started, a loss only a
// baseline has against the one that never acts. A breach that concerns no
// volume (a foreign taint removed) is the operator's by definition.
func attribute(op result, base func(since float64) result) attribution {
	var a attribution
	judged := func(v verdict, of violation, why string) {
		if v == operatorCaused && !of.hand {
			v, why = notItsMove, why+"; no operator write in its moves"
		}
		a.verdict = max(a.verdict, v)
		l := judgedLoss{verdict: v, category: of.category, why: why}
		if v == operatorCaused {
			l.class = of.class
		}
		a.losses = append(a.losses, l)
	}
	without := "without the operator"
	for _, o := range op.violations {
		if o.index < 0 {
			judged(operatorCaused, o, o.category)
			continue
		}
		if o.since > 0 {
			without = fmt.Sprintf("with the operator quitting at %.1fs", o.since)
		}
		mine, _ := exposureOf(op, o.index)
		b, ok := exposureOf(base(o.since), o.index)
		switch {
		case !ok:
			judged(operatorCaused, o, fmt.Sprintf("%s: nothing exposed %s", o.volume, without))
		case b.at > mine.at+sameLossSlack.Seconds():
			judged(operatorCaused, o, fmt.Sprintf("%s: exposed %.0fs later %s (%.1fs, not %.1fs)",
				o.volume, b.at-mine.at, without, b.at, mine.at))
		case b.from > mine.from+sameLossSlack.Seconds():
			judged(operatorCaused, o, fmt.Sprintf("%s: exposed values acknowledged since %.1fs %s, since %.1fs with it",
				o.volume, b.from, without, mine.from))
		default:
			judged(shared, o, fmt.Sprintf("%s: exposed %s too (at %.1fs, values since %.1fs; with it at %.1fs, since %.1fs)",
				o.volume, without, b.at, b.from, mine.at, mine.from))
		}
	}
	for _, b := range base(0).violations {
		if _, ok := exposureOf(op, b.index); !ok && b.index >= 0 {
			judged(baselineOnly, b, fmt.Sprintf("%s: lost without the operator only (from %.1fs)", b.volume, b.first))
		}
	}
	return a
}

// baselines plays episode i's baselines on demand, each once.
func baselines(seed uint64, i int, p Policy, op result) func(since float64) result {
	played := map[float64]result{}
	return func(since float64) result {
		r, ok := played[since]
		if !ok {
			r = runBaseline(seed, i, p, op.coupling, since, nil)
			played[since] = r
		}
		return r
	}
}

// exposureOf is a run's exposure of one volume.
func exposureOf(r result, index int) (exposure, bool) {
	i := slices.IndexFunc(r.exposures, func(x exposure) bool { return x.index == index })
	if i < 0 {
		return exposure{}, false
	}
	return r.exposures[i], true
}

// judge plays episode i with the operator and its baseline and compares
// them.
func judge(seed uint64, i int, p Policy) attribution {
	op := runEpisode(seed, i, p, nil)
	if len(op.violations) == 0 {
		return attribution{}
	}
	return attribute(op, baselines(seed, i, p, op))
}

// coupling is what a baseline shares with its operator run beyond the
// seed, for the two to differ by what the operator did and not by the luck
// of a draw (common random numbers). Both runs draw from one stream only
// until the operator's first call; from there its writes, crashes and
// their echoes shift every later draw. So the operator's run records:
//
//   - strikes: the targeted cuts its writes triggered, which the baseline
//     strikes as faults at the same moments (they stand for a second
//     failure, not for the operator);
//   - the components' draws that decide where and how long: the node the
//     scheduler puts each ReplicaSet's pod of each rank on, and how long
//     each replica's rebuild of each rank takes. The baseline takes the
//     outcome recorded under the same name and rank where it still
//     applies, and its own draw otherwise.
type coupling struct {
	// replay: a baseline reads what its operator run recorded; its
	// operator quits after quitAfter (from the episode's start).
	replay    bool
	quitAfter time.Duration
	strikes   []strike
	draws     map[string][]any
	// used counts, per name, the draws a baseline took.
	used map[string]int
}

func newCoupling() *coupling { return &coupling{draws: map[string][]any{}, used: map[string]int{}} }

// baseline is the coupling a baseline replays, its operator quitting
// after since model seconds.
func (c *coupling) baseline(since float64) *coupling {
	return &coupling{replay: true, quitAfter: time.Duration(since * float64(time.Second)), strikes: c.strikes,
		draws: c.draws, used: map[string]int{}}
}

// coupled is a draw named name: drawn and recorded in an operator run (or
// with no coupling), in a baseline the outcome its operator run recorded
// under the same name and rank if applies accepts it, else drawn.
func coupled[T any](c *coupling, name string, drawn T, applies func(T) bool) T {
	switch {
	case c == nil:
		return drawn
	case !c.replay:
		c.draws[name] = append(c.draws[name], drawn)
		return drawn
	}
	k := c.used[name]
	c.used[name]++
	if k < len(c.draws[name]) {
		if v := c.draws[name][k].(T); applies(v) {
			return v
		}
	}
	return drawn
}

// lossClass is a documented class of operator-caused loss: the run
// reports it by name instead of failing.
type lossClass struct {
	name string
	// matches tells whether a volume's first bad read is of the class.
	matches func(v *Volume, bad badRead, want write) bool
}

var (
	// §7 "The new engine's node cannot reach the current replicas": the
	// engine that served the read could not open a replica holding the
	// lost value because the storage network between their nodes was cut
	// while both nodes were up and reached the API server. Kubernetes and
	// Longhorn report both nodes Ready; only the old engine, cut off from
	// the API server, knew it dropped the replica.
	storageCutClass = lossClass{
		name: "storage-network cut between the new engine and the replicas with the last writes",
		matches: func(_ *Volume, bad badRead, want write) bool {
			return slices.ContainsFunc(bad.engine.cutOff, func(r *Replica) bool { return slices.Contains(want.onto, r) })
		},
	}
	// §7 "The delegate's fence stops another volume's last replica": the
	// operator's delegate fencer powered off a node holding a replica of
	// a volume whose engine ran elsewhere, a replica with the lost value:
	// the engine had lost its other replicas (a storage or rack cut)
	// seconds before. No API object shows which replicas an engine still
	// reaches; the engine's node, cut off, records nothing until it
	// returns.
	delegateFenceClass = lossClass{
		name: "the delegate's fence powered off another volume's only replica with the last writes",
		matches: func(v *Volume, _ badRead, want write) bool {
			return slices.ContainsFunc(v.fencedByDelegate, func(r *Replica) bool { return slices.Contains(want.onto, r) })
		},
	}
	// The delegate's own release: the operator created its delegate
	// fencing CR while a replica holding the lost value lived where the
	// API showed Longhorn could not reach it; the fencer's recovery
	// released the volume and Longhorn started the new engine without that
	// replica. release.FencerHold closes it (no fencer while a replica of
	// a volume to release is stranded): it is no documented class, so a
	// loss of it fails the run. It only tells the delegate's part in one.
	delegateReleaseClass = lossClass{
		name: "the delegate fencer's own release while a replica the API shows unreachable holds the last writes",
		matches: func(v *Volume, _ badRead, want write) bool {
			return slices.ContainsFunc(v.strandedAtDelegation, func(r *Replica) bool { return slices.Contains(want.onto, r) })
		},
	}
)

// unsignalledClasses are the classes of operator-caused loss that
// docs/safety.md §7 documents as unsignalled: the operator exposes them
// and no API object it could read shows them coming. The run reports
// them by name instead of failing.
var unsignalledClasses = []lossClass{storageCutClass, delegateFenceClass}

// delegateClasses are the ways the operator takes part in a loss through
// its delegate fencing CR, a write that is not destructive itself.
var delegateClasses = []lossClass{delegateFenceClass, delegateReleaseClass}

// lossClassOf names the documented class of a volume's first bad read, or "".
func lossClassOf(v *Volume, bad badRead, want write) string {
	for _, c := range unsignalledClasses {
		if c.matches(v, bad, want) {
			return c.name
		}
	}
	return ""
}

// byDelegate reports whether the operator's delegate fencing CR took part
// in a volume's first bad read.
func byDelegate(v *Volume, bad badRead, want write) bool {
	return slices.ContainsFunc(delegateClasses, func(c lossClass) bool { return c.matches(v, bad, want) })
}

func (a attribution) String() string {
	parts := make([]string, 0, len(a.losses))
	for _, l := range a.losses {
		part := l.verdict.String()
		if l.verdict == operatorCaused {
			class := l.class
			if class == "" {
				class = "in no documented class"
			}
			part += " [" + class + "]"
		}
		parts = append(parts, part+": "+l.why)
	}
	return a.verdict.String() + " — " + strings.Join(parts, "; ")
}
