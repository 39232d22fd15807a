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
	"cmp"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// summary aggregates a run of episodes.
type summary struct {
	seed        uint64
	policy      Policy
	episodes    int
	destructive int
	succeeded   int
	moved       int
	// verdicts are the episodes that lost writes in either run, judged by
	// replay (attribution.go); swept says whether every episode's baseline
	// ran (WORLDMODEL_BASELINE=all), without which baseline-only losses
	// are not looked for.
	verdicts map[int]attribution
	swept    bool
	// operator are the operator-caused episodes, in order; failing those
	// among them with a loss in no documented class.
	operator, failing []int
	// categories count losses by category and verdict; example is the
	// first episode of each.
	categories map[verdict]map[string]int
	example    map[string]int
	// neighbours are each episode's settings, for the counts per setting.
	neighbours []NeighbourSettings
	// causes count failing episodes by the hazards whose removal alone
	// ends their failure (attributeHazards).
	causes     map[string]int
	elapsed    time.Duration
	cpu        time.Duration
	steps      int
	reconciles int
}

// runEpisodes plays episodes [0, n) on every core, then replays those that
// lost writes without the operator (every episode with sweep); the result
// does not depend on scheduling.
func runEpisodes(seed uint64, n int, p Policy, sweep bool) *summary {
	began, cpuBefore := time.Now(), cpuTime()
	results := parallel(n, func(i int) result {
		r := runEpisode(seed, i, p, nil)
		if len(r.violations) == 0 && !sweep {
			r.coupling = nil // no baseline will replay it
		}
		return r
	})
	s := &summary{seed: seed, policy: p, episodes: n, verdicts: map[int]attribution{}, swept: sweep,
		categories: map[verdict]map[string]int{}, example: map[string]int{}, causes: map[string]int{}}
	var replay []int
	for i, r := range results {
		s.add(r)
		if len(r.violations) > 0 || sweep {
			replay = append(replay, i)
		}
	}
	verdicts := parallel(len(replay), func(k int) attribution {
		i := replay[k]
		return attribute(results[i], baselines(seed, i, p, results[i]))
	})
	for k, i := range replay {
		s.judged(i, verdicts[k])
	}
	s.elapsed, s.cpu = time.Since(began), cpuTime()-cpuBefore
	return s
}

// parallel computes f(0..n-1) on every core.
func parallel[T any](n int, f func(int) T) []T {
	out := make([]T, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				out[i] = f(i)
			}
		})
	}
	wg.Wait()
	return out
}

// attributeHazards replays every failing episode with each of the run's
// hazards taken out in turn (the episode is otherwise the same), each
// against its own baseline, and counts the episodes by the hazards whose
// removal alone ends their failure.
func (s *summary) attributeHazards() {
	causes := parallel(len(s.failing), func(k int) string {
		var cures []string
		for _, h := range hazardNames {
			if !*h.field(&s.policy.Hazards) {
				continue
			}
			p := s.policy
			p.Hazards = p.Hazards.without(h.name)
			if !judge(s.seed, s.failing[k], p).failing() {
				cures = append(cures, h.name)
			}
		}
		if len(cures) == 0 {
			return "no single hazard (fails without each of them)"
		}
		return "without " + strings.Join(cures, " or ")
	})
	for _, c := range causes {
		s.causes[c]++
	}
}

// add counts an episode's operator run.
func (s *summary) add(r result) {
	s.steps += r.steps
	s.reconciles += r.reconciles
	if r.destructive {
		s.destructive++
	}
	if r.succeeded {
		s.succeeded++
	}
	if r.moved {
		s.moved++
	}
	s.neighbours = append(s.neighbours, r.neighbours)
}

// judged records episode i's verdict, and its losses by verdict and
// category.
func (s *summary) judged(i int, a attribution) {
	if a.verdict == lossless {
		return
	}
	s.verdicts[i] = a
	for _, l := range a.losses {
		if s.categories[l.verdict] == nil {
			s.categories[l.verdict] = map[string]int{}
		}
		s.categories[l.verdict][l.category]++
		if key := fmt.Sprint(l.verdict, l.category); s.example[key] == 0 {
			s.example[key] = i + 1 // 0: none yet
		}
	}
	if a.verdict == operatorCaused {
		s.operator = append(s.operator, i)
		if a.failing() {
			s.failing = append(s.failing, i)
		}
	}
}

// counted are the episodes of each verdict.
func (s *summary) counted(v verdict) int {
	n := 0
	for _, a := range s.verdicts {
		if a.verdict == v {
			n++
		}
	}
	return n
}

// line is the one-line result the test prints.
func (s *summary) line() string {
	baseline := "not swept"
	if s.swept {
		baseline = fmt.Sprint(s.counted(baselineOnly))
	}
	return fmt.Sprintf("worldmodel: %d episodes, %d destructive, %d succeeded, %d ran s3gw elsewhere; "+
		"losses by replay: %d operator-caused (%d in no documented class), %d shared with the baseline, %s baseline-only, "+
		"%d not reproduced without the operator but in no move of its own (seed %#x, fencing %s, %s)",
		s.episodes, s.destructive, s.succeeded, s.moved, len(s.operator), len(s.failing), s.counted(shared), baseline,
		s.counted(notItsMove), s.seed, s.policy, s.elapsed.Round(time.Second))
}

// work is the cost per episode, for tuning.
func (s *summary) work() string {
	perEpisode := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(s.episodes) }
	return fmt.Sprintf("per episode: %d world steps, %d reconciles, %.1f ms CPU, %.1f ms wall on %d cores",
		s.steps/s.episodes, s.reconciles/s.episodes, perEpisode(s.cpu), perEpisode(s.elapsed), runtime.GOMAXPROCS(0))
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// breakdown lists the losses by verdict and category, the operator-caused
// episodes by documented class, the counts per neighbour setting, and the
// hazards that failing episodes need.
func (s *summary) breakdown() string {
	var b strings.Builder
	sorted := func(counts map[string]int) []string {
		return slices.SortedFunc(maps.Keys(counts), func(x, y string) int {
			return cmp.Or(cmp.Compare(counts[y], counts[x]), cmp.Compare(x, y))
		})
	}
	for _, v := range []verdict{operatorCaused, shared, baselineOnly} {
		counts := s.categories[v]
		if len(counts) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s losses by category (episodes may count in several):\n", v)
		for _, k := range sorted(counts) {
			fmt.Fprintf(&b, "  %6d  %s (e.g. episode %d)\n", counts[k], k, s.example[fmt.Sprint(v, k)]-1)
		}
	}
	classes := map[string]int{}
	for _, i := range s.operator {
		for _, l := range s.verdicts[i].losses {
			switch {
			case l.verdict != operatorCaused:
			case l.class == "":
				classes["in no documented class (a new hole: fails the run)"]++
			default:
				classes[l.class]++
			}
		}
	}
	if len(classes) > 0 {
		fmt.Fprintf(&b, "operator-caused losses by documented class (docs/safety.md §7):\n")
		for _, k := range sorted(classes) {
			fmt.Fprintf(&b, "  %6d  %s\n", classes[k], k)
		}
	}
	if s.policy.Hazards.NeighbourSettings || s.policy.Neighbours != "" {
		b.WriteString(s.perSetting())
	}
	if len(s.causes) > 0 {
		fmt.Fprintf(&b, "failing episodes by the hazard whose removal alone ends their failure:\n")
		for _, k := range sorted(s.causes) {
			fmt.Fprintf(&b, "  %6d  %s\n", s.causes[k], k)
		}
	}
	return b.String()
}

// perSetting counts episodes by each neighbour setting's value and
// verdict.
func (s *summary) perSetting() string {
	var b strings.Builder
	fmt.Fprintf(&b, "per neighbour setting: episodes, operator-caused, not its move, shared, baseline-only:\n")
	for _, n := range neighbourSettings {
		for _, value := range n.values {
			var episodes int
			var by [operatorCaused + 1]int
			for i, set := range s.neighbours {
				if n.get(set) != value {
					continue
				}
				episodes++
				if a, ok := s.verdicts[i]; ok {
					by[a.verdict]++
				}
			}
			baseline := "-"
			if s.swept {
				baseline = fmt.Sprint(by[baselineOnly])
			}
			fmt.Fprintf(&b, "  %s=%-5s %6d %6d %6d %6d %6s\n", n.name, value, episodes, by[operatorCaused], by[notItsMove],
				by[shared], baseline)
		}
	}
	return b.String()
}
