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
	"testing"
)

// TestAttribute pins how a loss is judged against the same episode without
// the operator: the operator's when the baseline exposes nothing, later
// (beyond the slack) or reaching back less far, if one of its writes took
// part in the loss's moves (else the neighbours': not its move); shared
// otherwise; a loss only the baseline has is baseline-only; a foreign
// taint removed is always the operator's; and only an operator-caused loss
// in no documented class fails the run.
func TestAttribute(t *testing.T) {
	lost := func(index int, class string) violation {
		return violation{volume: "v" + itoa(index), index: index, category: "lost", class: class, hand: true}
	}
	exposed := func(index int, at, from float64) exposure {
		return exposure{index: index, at: at, from: from}
	}
	slack := sameLossSlack.Seconds()
	for _, tc := range []struct {
		name    string
		op      result
		base    result
		want    verdict
		failing bool
	}{
		{"nothing lost", result{}, result{}, lossless, false},
		{"nothing exposed without the operator",
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 100, 2)}},
			result{}, operatorCaused, true},
		{"the same, in a documented class",
			result{violations: []violation{lost(0, "a class")}, exposures: []exposure{exposed(0, 100, 2)}},
			result{}, operatorCaused, false},
		{"exposed later without the operator",
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 100, 2)}},
			result{exposures: []exposure{exposed(0, 100+slack+1, 2)}}, operatorCaused, true},
		{"exposed within the slack: shared",
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 100, 2)}},
			result{exposures: []exposure{exposed(0, 100+slack, 2)}}, shared, false},
		{"values acknowledged later exposed without the operator",
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 100, 2)}},
			result{exposures: []exposure{exposed(0, 90, 2+slack+1)}}, operatorCaused, true},
		{"exposed sooner, reaching further back, without the operator: shared",
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 100, 20)}},
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 40, 10)}}, shared, false},
		{"another volume's exposure does not share it",
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 100, 2)}},
			result{exposures: []exposure{exposed(1, 100, 2)}}, operatorCaused, true},
		{"lost without the operator only",
			result{},
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 100, 2)}}, baselineOnly, false},
		{"exposed with the operator, lost without: not baseline-only",
			result{exposures: []exposure{exposed(0, 100, 2)}},
			result{violations: []violation{lost(0, "")}, exposures: []exposure{exposed(0, 100, 2)}}, lossless, false},
		{"not reproduced, but no operator write in its moves",
			result{violations: []violation{{volume: "v0", category: "lost"}}, exposures: []exposure{exposed(0, 100, 2)}},
			result{}, notItsMove, false},
		{"a foreign taint removed",
			result{violations: []violation{{index: -1, category: "taint", hand: true}}}, result{}, operatorCaused, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := attribute(tc.op, func(float64) result { return tc.base })
			if a.verdict != tc.want || a.failing() != tc.failing {
				t.Errorf("%s; want %s, failing %v", a, tc.want, tc.failing)
			}
		})
	}
}

// TestAttributeFromTheLostWritesEngine: a loss of writes an engine started
// at 200 s acknowledged is judged against the baseline whose operator
// quits then, and a loss only a baseline has against the one that never
// acts.
func TestAttributeFromTheLostWritesEngine(t *testing.T) {
	op := result{violations: []violation{{volume: "v0", index: 0, since: 200, category: "lost", hand: true}},
		exposures: []exposure{{index: 0, at: 300, from: 250}}}
	var asked []float64
	base := func(since float64) result {
		asked = append(asked, since)
		if since == 200 {
			return result{exposures: []exposure{{index: 0, at: 300, from: 250}}}
		}
		return result{violations: []violation{{volume: "v1", index: 1, category: "lost"}},
			exposures: []exposure{{index: 1, at: 50, from: 40}}}
	}
	a := attribute(op, base)
	if len(a.losses) != 2 || a.losses[0].verdict != shared || a.losses[1].verdict != baselineOnly {
		t.Errorf("%s; want v0 shared (the operator quitting at 200 s), v1 baseline-only", a)
	}
	if len(asked) != 2 || asked[0] != 200 || asked[1] != 0 {
		t.Errorf("baselines asked for %v, want [200 0]", asked)
	}
}

// TestCoupledDraws: an operator run records each named draw; its baseline
// takes the recorded outcome of the same name and rank where it applies,
// and its own draw otherwise or once the record runs out.
func TestCoupledDraws(t *testing.T) {
	op := newCoupling()
	for _, n := range []string{"n2", "n3"} {
		if got := coupled(op, "schedule rs", n, func(string) bool { return false }); got != n {
			t.Fatalf("operator run took %s, drew %s", got, n)
		}
	}
	base := op.baseline(0)
	fits := func(nodes ...string) func(string) bool {
		return func(n string) bool {
			for _, m := range nodes {
				if m == n {
					return true
				}
			}
			return false
		}
	}
	for i, tc := range []struct {
		drawn string
		fits  func(string) bool
		want  string
	}{
		{"n1", fits("n1", "n2"), "n2"}, // the recorded first
		{"n1", fits("n1"), "n1"},       // the recorded second does not fit
		{"n4", fits("n2", "n4"), "n4"}, // no third recorded
	} {
		if got := coupled(base, "schedule rs", tc.drawn, tc.fits); got != tc.want {
			t.Errorf("baseline draw %d: %s, want %s", i, got, tc.want)
		}
	}
	if got := coupled[string](nil, "schedule rs", "n5", nil); got != "n5" {
		t.Errorf("without coupling: %s, want the draw", got)
	}
}

// TestStorageCutClass: a loss whose lost writes sat on a replica the
// serving engine could not open because the storage network alone
// separated them is of the documented class; one on a replica whose node
// was off, or cut from the control plane too, is not.
func TestStorageCutClass(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cut   func(w *World)
		class bool
	}{
		{"storage network only", func(w *World) { w.nodes[2].Net = 7 }, true},
		{"a partition (control plane too)", func(w *World) { w.nodes[2].Net, w.nodes[2].CP = 7, false }, false},
		{"the replica's node off", func(w *World) { w.nodes[2].Powered = false }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, v := engineWorld(false)
			for _, n := range w.nodes {
				n.CP = true
			}
			tc.cut(w)
			e := startEngine(w, v, w.nodes[0], v.Replicas, false)
			want := write{id: 9, block: 0, onto: []*Replica{v.Replicas[2]}}
			got := lossClassOf(v, badRead{engine: e}, want)
			if (got != "") != tc.class {
				t.Errorf("class %q, want one: %v", got, tc.class)
			}
		})
	}
}
