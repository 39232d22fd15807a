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
	"testing"
	"time"
)

// These pin the engine model to longhorn-engine's rules (engine.go).

// engineWorld is a world of three connected nodes with one replica each.
func engineWorld(revisionCounterDisabled bool) (*World, *Volume) {
	w := &World{now: epoch, start: epoch, rnd: rand.New(rand.NewPCG(1, 2)), pending: map[time.Time]bool{}}
	v := &Volume{Name: "vol", RevisionCounterDisabled: revisionCounterDisabled}
	for i := range 3 {
		n := &Node{Name: "n" + itoa(i+1), Powered: true}
		w.nodes = append(w.nodes, n)
		v.Replicas = append(v.Replicas, &Replica{Name: "vol-r-" + itoa(i), Node: n, Running: true, Inc: 1})
	}
	w.volumes = []*Volume{v}
	return w, v
}

func modes(e *Engine) string {
	s := ""
	for _, ref := range e.reps {
		s += ref.mode.String() + " "
	}
	return s
}

func TestEngineStartComparesRevisionCountersOnlyWhenEnabled(t *testing.T) {
	for _, tc := range []struct {
		name     string
		disabled bool
		salvage  bool
		want     string
	}{
		{"enabled: the lagging replica is ERR", false, false, "RW RW ERR "},
		{"enabled: salvage changes nothing", false, true, "RW RW ERR "},
		{"disabled: every replica that answers is RW", true, false, "RW RW RW "},
		// Modified within 5 s of the latest: r-0 and r-1; the larger head wins.
		{"disabled with salvage: one replica", true, true, "ERR RW ERR "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, v := engineWorld(tc.disabled)
			for i, d := range []disk{
				{rev: 5, mtime: epoch, head: 0b0001},
				{rev: 5, mtime: epoch.Add(-2 * time.Second), head: 0b0111},
				{rev: 4, mtime: epoch.Add(-10 * time.Second), head: 0b1111},
			} {
				v.Replicas[i].disk = d
			}
			e := startEngine(w, v, w.nodes[0], v.Replicas, tc.salvage)
			if got := modes(e); got != tc.want || !e.Running {
				t.Errorf("modes %q running %v, want %q running", got, e.Running, tc.want)
			}
		})
	}
}

func TestEngineStartFailsWithoutAReplica(t *testing.T) {
	w, v := engineWorld(false)
	w.nodes[1].Net, w.nodes[2].Net = 1, 1
	v.Replicas[0].Running = false
	e := startEngine(w, v, w.nodes[0], v.Replicas, false)
	if e.Running || modes(e) != "ERR ERR ERR " {
		t.Errorf("modes %q running %v, want every replica ERR and no engine", modes(e), e.Running)
	}
}

func TestEngineAcknowledgesThroughRWReplicasOnly(t *testing.T) {
	w, v := engineWorld(false)
	e := startEngine(w, v, w.nodes[0], v.Replicas[:2], false)
	if !e.addRebuild(w, v.Replicas[2], time.Minute) {
		t.Fatal("rebuild not started")
	}
	w.nodes[1].Net = 1 // r-1 unreachable
	if onto, acked := e.write(w, 0, 1); !acked || len(onto) != 2 {
		t.Errorf("write with r-0 RW: acked %v onto %s, want acked onto r-0 and the WO r-2", acked, replicaNames(onto))
	}
	v.Replicas[0].Running = false
	if onto, acked := e.write(w, 0, 2); acked || len(onto) != 1 || onto[0] != v.Replicas[2] {
		t.Errorf("write with only the WO replica: acked %v onto %s, want not acknowledged, written to r-2", acked, replicaNames(onto))
	}
	if got := modes(e); got != "ERR ERR WO " {
		t.Errorf("modes %q, want the replicas that failed ERR", got)
	}
}

func TestEngineServesEveryRWReplica(t *testing.T) {
	w, v := engineWorld(true)
	v.Replicas[0].disk.blocks[0], v.Replicas[1].disk.blocks[0] = 7, 3
	e := startEngine(w, v, w.nodes[2], v.Replicas[:2], false)
	seen := map[int]bool{}
	for range 50 {
		got, _, ok := e.read(w, 0)
		seen[got] = ok
	}
	if !seen[7] || !seen[3] {
		t.Errorf("reads returned %v, want both replicas' blocks (7 and 3)", seen)
	}
}

func TestEngineRebuildCopiesThenTurnsRW(t *testing.T) {
	w, v := engineWorld(false)
	v.Replicas[0].disk = disk{blocks: [volumeBlocks]int{1, 2, 3, 4}, rev: 9}
	v.Replicas[2].disk = disk{blocks: [volumeBlocks]int{9, 9, 9, 9}, rev: 12}
	e := startEngine(w, v, w.nodes[0], v.Replicas[:1], false)
	if !e.addRebuild(w, v.Replicas[2], time.Minute) || e.addRebuild(w, v.Replicas[1], time.Minute) {
		t.Fatal("want one rebuild at a time")
	}
	if d := v.Replicas[2].disk; d.blocks != [volumeBlocks]int{1, 2, 3, 4} || d.rev != 0 {
		t.Errorf("rebuilding replica holds %v rev %d, want the RW replica's blocks and rev 0", d.blocks, d.rev)
	}
	e.write(w, 1, 5)
	w.now = w.now.Add(time.Minute)
	e.finishRebuild(w)
	if m, _ := e.mode(v.Replicas[2]); m != modeRW || v.Replicas[2].disk.rev != v.Replicas[0].disk.rev ||
		v.Replicas[2].disk.blocks[1] != 5 {
		t.Errorf("after the rebuild: mode %s rev %d block %d, want RW with the RW replica's counter and the write made meanwhile",
			m, v.Replicas[2].disk.rev, v.Replicas[2].disk.blocks[1])
	}
}
