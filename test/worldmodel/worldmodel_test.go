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
	cryptorand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"testing"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Environment:
//
//	WORLDMODEL_SEED=<n>|random  seed of the run (default: fixed)
//	WORLDMODEL_EPISODES=<n>     episodes (default 20000)
//	WORLDMODEL_EPISODE=<i>      replay episode i with its trace
//	WORLDMODEL_TRACE_API=1      also trace every API write in a replay
//	WORLDMODEL_SUMMARY=<file>   append the summary line and breakdown to a file
//	WORLDMODEL_REPORT=<file>    write the operator-caused episodes as JSON
//	WORLDMODEL_BASELINE=all     also play every episode without the operator,
//	                            to count the losses only the baseline has
//	                            (default: only those of episodes that lost writes)
//	WORLDMODEL_TRACE_BASELINE=1 also trace the baseline in a replay
//	WORLDMODEL_POLICY=accept-unreachable-replicas
//	                            run TestWorldModel with release.requireReachableReplicas
//	                            false (hack/mutations: evidence rules are the only guard then)
//	WORLDMODEL_POLICY=accept-stale-reads
//	                            run TestWorldModel with release.acceptStaleReadsWithoutRevisionCounter
//	                            (the gate without its revision-counter rule)
//	WORLDMODEL_HAZARDS=none|all|revision-counter,clock-skew,informer-lag,
//	                            cut-after-ticket,cut-after-release,snr,node-recreated,
//	                            taint-handover,neighbour-settings
//	                            the hazards of TestWorldModel (default: see
//	                            defaultHazards)
//	WORLDMODEL_NEIGHBOURS=disable-force-detach-on-timeout=true,auto-salvage=false,
//	                            replica-replenishment-wait-interval=0
//	                            pin neighbours' settings for every episode
//	                            (any of them; neighbours.go)
const (
	defaultSeed     = 0x5eed_2026
	defaultEpisodes = 20000
	// tracesShown is how many violating episodes a failure replays.
	tracesShown = 3
	// minDestructiveShare keeps the test from passing by never acting.
	// About 10 % do with every hazard (16 % before the gate refused volumes
	// whose revision counter is disabled); a fresh seed varies it by a
	// quarter of a point.
	minDestructiveShare = 0.06
)

func TestWorldModel(t *testing.T) {
	// Episodes allocate briskly and live briefly: trade memory for GC time.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	seed, policy := seedFromEnv(t), policyFromEnv(t)
	if replay, ok := os.LookupEnv("WORLDMODEL_EPISODE"); ok {
		replayEpisode(t, seed, replay, policy)
		return
	}
	s := runEpisodes(seed, intFromEnv(t, "WORLDMODEL_EPISODES", defaultEpisodes), policy, sweepFromEnv(t))
	report(t, s)
	if share := float64(s.destructive) / float64(s.episodes); share < minDestructiveShare {
		t.Errorf("only %.0f%% of episodes had a destructive operator write (want ≥ %.0f%%): the model no longer exercises the gate",
			share*100, minDestructiveShare*100)
	}
	if s.succeeded == 0 || s.moved == 0 {
		t.Errorf("no remediation succeeded (%d) or no s3gw ran elsewhere (%d)", s.succeeded, s.moved)
	}
	if len(s.failing) == 0 {
		t.Log(s.breakdown())
		return
	}
	if policy.Hazards != (Hazards{}) {
		s.attributeHazards()
	}
	t.Errorf("%d of %d episodes lost writes by the operator's doing, in no class docs/safety.md §7 documents\n%s%s",
		len(s.failing), s.episodes, s.breakdown(), traces(s, policy))
}

// TestWorldModelCatchesDisabledFencing proves the checker can fail: with
// fencing.mode Disabled (unsafe by design) the operator loses writes.
func TestWorldModelCatchesDisabledFencing(t *testing.T) {
	requireViolations(t, 1000, Policy{Mode: s3gwv1alpha1.FencingModeDisabled, Hazards: defaultHazards},
		"fencing disabled: the model cannot see split brain")
}

// TestWorldModelCatchesUnreachableReplicas shows the rule that no replica
// may live where Longhorn cannot reach it is load-bearing: switched off,
// fencing alone loses writes an engine cut off from its other replicas
// acknowledged to the ones it still reached, before it was fenced.
func TestWorldModelCatchesUnreachableReplicas(t *testing.T) {
	requireViolations(t, 2000, Policy{Mode: s3gwv1alpha1.FencingModeRequireEvidence, AcceptUnreachableReplicas: true,
		Hazards: defaultHazards}, "requireReachableReplicas false: the model cannot see writes stranded on a fenced node")
}

// TestWorldModelCatchesStaleReads shows the revision-counter rule is
// load-bearing: with release.acceptStaleReadsWithoutRevisionCounter, a
// volume whose revision counter is disabled is released on fencing
// evidence, and its next engine serves replicas that differ.
func TestWorldModelCatchesStaleReads(t *testing.T) {
	requireViolations(t, 2000, Policy{Mode: s3gwv1alpha1.FencingModeRequireEvidence, AcceptStaleReads: true,
		Hazards: defaultHazards}, "acceptStaleReadsWithoutRevisionCounter: the model cannot see replicas served side by side")
}

// requireViolations runs episodes under a policy that gives up a rule and
// fails unless the model finds the harm, as the operator's; blind says
// what it would miss.
func requireViolations(t *testing.T, episodes int, p Policy, blind string) {
	s := runEpisodes(seedFromEnv(t), episodes, p, false)
	t.Log(s.line())
	t.Log(s.breakdown())
	if len(s.operator) == 0 {
		t.Errorf("no operator-caused loss with %s", blind)
	}
}

// policyFromEnv is safePolicy unless WORLDMODEL_POLICY names an opt-out
// or WORLDMODEL_HAZARDS other hazards.
func policyFromEnv(t *testing.T) Policy {
	p := safePolicy
	switch v := os.Getenv("WORLDMODEL_POLICY"); v {
	case "":
	case acceptUnreachableReplicas:
		p.AcceptUnreachableReplicas = true
	case acceptStaleReads:
		p.AcceptStaleReads = true
	default:
		t.Fatalf("WORLDMODEL_POLICY=%q: want empty, %q or %q", v, acceptUnreachableReplicas, acceptStaleReads)
	}
	if v := os.Getenv("WORLDMODEL_HAZARDS"); v != "" {
		h, err := parseHazards(v)
		if err != nil {
			t.Fatalf("WORLDMODEL_HAZARDS=%q: %v", v, err)
		}
		p.Hazards = h
	}
	pins, err := parseNeighbourPins(os.Getenv("WORLDMODEL_NEIGHBOURS"))
	if err != nil {
		t.Fatalf("WORLDMODEL_NEIGHBOURS: %v", err)
	}
	p.Neighbours = pins
	return p
}

// sweepFromEnv reads WORLDMODEL_BASELINE.
func sweepFromEnv(t *testing.T) bool {
	switch v := os.Getenv("WORLDMODEL_BASELINE"); v {
	case "":
		return false
	case "all":
		return true
	default:
		t.Fatalf("WORLDMODEL_BASELINE=%q: want empty or all", v)
		return false
	}
}

// WORLDMODEL_POLICY's opt-out values.
const (
	acceptUnreachableReplicas = "accept-unreachable-replicas"
	acceptStaleReads          = "accept-stale-reads"
)

func report(t *testing.T, s *summary) {
	t.Log(s.line())
	t.Log(s.work())
	if path := os.Getenv("WORLDMODEL_SUMMARY"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = f.Close() }()
		if _, err := fmt.Fprint(f, s.line()+"\n"+s.breakdown()); err != nil {
			t.Fatal(err)
		}
	}
	if path := os.Getenv("WORLDMODEL_REPORT"); path != "" {
		data, err := json.Marshal(map[string]any{"seed": s.seed, "episodes": s.episodes, "operator": s.operator,
			"failing": s.failing, "shared": s.counted(shared)})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// traces replays the first failing episodes with their timelines.
func traces(s *summary, p Policy) string {
	out := ""
	for _, i := range s.failing[:min(tracesShown, len(s.failing))] {
		r := runEpisode(s.seed, i, p, &trace{})
		out += fmt.Sprintf("\n--- episode %d (replay: WORLDMODEL_SEED=%#x WORLDMODEL_EPISODE=%d)\n", i, s.seed, i)
		out += fmt.Sprintf("%s\n", s.verdicts[i])
		for _, v := range r.violations {
			out += fmt.Sprintf("VIOLATION [%s] %s\n", v.category, v.detail)
		}
		out += r.trace.String() + "\n"
	}
	return out
}

// replayEpisode plays one episode with its timeline, then its baseline,
// and fails if the operator caused a loss in no documented class.
func replayEpisode(t *testing.T, seed uint64, value string, p Policy) {
	i, err := strconv.Atoi(value)
	if err != nil {
		t.Fatalf("WORLDMODEL_EPISODE=%q: %v", value, err)
	}
	r := runEpisode(seed, i, p, &trace{api: os.Getenv("WORLDMODEL_TRACE_API") != ""})
	t.Logf("episode %d of seed %#x:\n%s", i, seed, r.trace)
	for _, v := range r.violations {
		t.Logf("loss [%s] %s", v.category, v.detail)
	}
	t.Logf("destructive=%v succeeded=%v ran elsewhere=%v", r.destructive, r.succeeded, r.moved)
	played := map[float64]result{}
	a := attribute(r, func(since float64) result {
		if base, ok := played[since]; ok {
			return base
		}
		var tr *trace
		if os.Getenv("WORLDMODEL_TRACE_BASELINE") != "" {
			tr = &trace{}
		}
		base := runBaseline(seed, i, p, r.coupling, since, tr)
		if tr != nil {
			t.Logf("the same episode, the operator acting until %.1fs:\n%s", since, tr)
		}
		for _, v := range base.violations {
			t.Logf("loss with the operator acting until %.1fs [%s] %s", since, v.category, v.detail)
		}
		played[since] = base
		return base
	})
	if a.failing() {
		t.Errorf("%s", a)
	} else {
		t.Logf("%s", a)
	}
}

func seedFromEnv(t *testing.T) uint64 {
	switch v := os.Getenv("WORLDMODEL_SEED"); v {
	case "":
		return defaultSeed
	case "random":
		var b [8]byte
		if _, err := cryptorand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		seed := binary.LittleEndian.Uint64(b[:])
		t.Logf("worldmodel: drew seed %#x", seed)
		return seed
	default:
		seed, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("WORLDMODEL_SEED=%q: %v", v, err)
		}
		return seed
	}
}

func intFromEnv(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
