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

import "testing"

func TestReadsCheckWhatWasAcknowledged(t *testing.T) {
	type read struct{ got, bad int }
	for _, tc := range []struct {
		name string
		// acked and inFlight are the writes to block 0, in that order;
		// readBefore is read between them.
		acked, inFlight []int
		readBefore      bool
		reads           []read // the bad reads counted after each
	}{
		{"the last acknowledged value, again and again", []int{1}, nil, false, []read{{1, 0}, {1, 0}}},
		{"an older acknowledged value", []int{1, 2}, nil, false, []read{{2, 0}, {1, 1}}},
		{"the initial content after a write", []int{1}, nil, false, []read{{0, 1}}},
		{"a write in flight at a crash, consistently", []int{1}, []int{2}, false, []read{{2, 0}, {2, 0}}},
		{"the value before a write in flight, consistently", []int{1}, []int{2}, false, []read{{1, 0}, {1, 0}}},
		{"both values around a write in flight", []int{1}, []int{2}, false, []read{{2, 0}, {1, 1}, {2, 1}, {1, 2}}},
		{"a read before the write in flight does not count against it", []int{1}, []int{2}, true, []read{{2, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, v := engineWorld(false)
			e := startEngine(w, v, w.nodes[0], v.Replicas, false)
			v.hist = newHistory(e)
			for _, id := range tc.acked {
				v.hist.acked(write{id: id, engine: e})
			}
			if tc.readBefore {
				w.checkRead(v, e, v.Replicas[0], 0, tc.acked[len(tc.acked)-1])
			}
			for _, id := range tc.inFlight {
				v.hist.inFlight(write{id: id, engine: e})
			}
			for i, r := range tc.reads {
				w.checkRead(v, e, v.Replicas[0], 0, r.got)
				if got := len(v.hist.bad); got != r.bad {
					t.Fatalf("after read %d (value %d): %d bad reads, want %d", i, r.got, got, r.bad)
				}
			}
		})
	}
}

// An operator write is blamed for a lost write only if it came while the
// engine that acknowledged it could have been running, and before the
// engine that served the read started.
func TestMovingActIsBetweenTheEnginesInvolved(t *testing.T) {
	for _, tc := range []struct {
		name  string
		act   operatorAct
		blame bool
	}{
		{"a release of the writer's node while it ran", operatorAct{at: 150, node: "n2"}, true},
		{"a release of the first engine's node before the writer started", operatorAct{at: 90, node: "n1"}, false},
		{"a release of the writer's node before it started", operatorAct{at: 90, node: "n2"}, false},
		{"a release after the reader started", operatorAct{at: 250, node: "n2"}, false},
		{"a release of a node no engine involved ran on", operatorAct{at: 150, node: "n3"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, v := engineWorld(false)
			first := &Engine{Seq: 0, Node: w.nodes[0], StartedAt: 0}
			writer := &Engine{Seq: 1, Node: w.nodes[1], StartedAt: 100}
			reader := &Engine{Seq: 2, Node: w.nodes[2], StartedAt: 200}
			w.stats = &episodeStats{acts: map[int][]operatorAct{v.Index: {tc.act}}}
			got := w.movingAct(v, []*Engine{writer, first}, reader)
			if (got != nil) != tc.blame {
				t.Errorf("movingAct = %v, want blamed %v", got, tc.blame)
			}
		})
	}
}

// TestExposure: reading every block from every replica an engine serves
// finds what a read could get wrong, without a read's luck: a replica
// without the last acknowledged value, replicas that disagree, or a value
// other than the first read returned; replicas that agree on it expose
// nothing, and a write in flight at a crash may be on all of them.
func TestExposure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		acked    int   // the last acknowledged write to block 0
		inFlight int   // a write in flight at a crash since, or 0
		seen     int   // the value a read of block 0 returned since, or -1
		replicas []int // block 0 on each replica
		exposed  bool
	}{
		{"every replica has the last write", 5, 0, -1, []int{5, 5, 5}, false},
		{"one lacks it", 5, 0, -1, []int{5, 4, 5}, true},
		{"all lack it", 5, 0, -1, []int{4, 4, 4}, true},
		{"the write in flight everywhere", 5, 6, -1, []int{6, 6, 6}, false},
		{"the write in flight on some", 5, 6, -1, []int{6, 5, 5}, true},
		{"a value other than the first read's", 5, 6, 6, []int{5, 5, 5}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, v := engineWorld(false)
			e := startEngine(w, v, w.nodes[0], v.Replicas, false)
			v.hist = newHistory(e)
			v.hist.acked(write{id: tc.acked, engine: e})
			if tc.inFlight > 0 {
				v.hist.inFlight(write{id: tc.inFlight, engine: e})
			}
			v.hist.seen[0] = tc.seen
			for i, r := range v.Replicas {
				r.disk.blocks[0] = tc.replicas[i]
			}
			w.expose(v, e, false)
			if got := v.hist.exposed[[2]int{0, tc.acked}]; got != tc.exposed {
				t.Errorf("block 0 exposed %v, want %v", got, tc.exposed)
			}
		})
	}
}
