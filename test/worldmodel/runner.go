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
	// violating are the episodes with a counted violation, in order.
	violating []int
	// categories count counted violations; environment counts losses the
	// operator had no part in.
	categories  map[string]int
	environment map[string]int
	// example is the first episode of each category.
	example map[string]int
	// causes count violating episodes by the hazards whose removal alone
	// ends their violations (attributeHazards).
	causes     map[string]int
	elapsed    time.Duration
	cpu        time.Duration
	steps      int
	reconciles int
}

// runEpisodes plays episodes [0, n) on every core; the result does not
// depend on scheduling.
func runEpisodes(seed uint64, n int, p Policy) *summary {
	began, cpuBefore := time.Now(), cpuTime()
	results := parallel(n, func(i int) result { return runEpisode(seed, i, p, nil) })
	s := &summary{seed: seed, policy: p, episodes: n, categories: map[string]int{}, environment: map[string]int{},
		example: map[string]int{}, causes: map[string]int{}, elapsed: time.Since(began), cpu: cpuTime() - cpuBefore}
	for i, r := range results {
		s.add(i, r)
	}
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

// attributeHazards replays every violating episode with each of the run's
// hazards taken out in turn (the episode is otherwise the same) and counts
// the episodes by the hazards whose removal alone ends their counted
// violations.
func (s *summary) attributeHazards() {
	causes := parallel(len(s.violating), func(k int) string {
		var cures []string
		for _, h := range hazardNames {
			if !*h.field(&s.policy.Hazards) {
				continue
			}
			p := s.policy
			p.Hazards = p.Hazards.without(h.name)
			if !runEpisode(s.seed, s.violating[k], p, nil).counted() {
				cures = append(cures, h.name)
			}
		}
		if len(cures) == 0 {
			return "no single hazard (violates without each of them)"
		}
		return "without " + strings.Join(cures, " or ")
	})
	for _, c := range causes {
		s.causes[c]++
	}
}

// counted reports whether an episode had a violation the operator caused.
func (r result) counted() bool {
	for _, v := range r.violations {
		if v.operator {
			return true
		}
	}
	return false
}

func (s *summary) add(i int, r result) {
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
	counted := false
	for _, v := range r.violations {
		key := fmt.Sprint(v.operator, v.category)
		if _, seen := s.example[key]; !seen {
			s.example[key] = i
		}
		if v.operator {
			s.categories[v.category]++
			counted = true
		} else {
			s.environment[v.category]++
		}
	}
	if counted {
		s.violating = append(s.violating, i)
	}
}

// line is the one-line result the test prints.
func (s *summary) line() string {
	return fmt.Sprintf("worldmodel: %d episodes, %d destructive, %d succeeded, %d ran s3gw elsewhere, %d violations (seed %#x, fencing %s, %s)",
		s.episodes, s.destructive, s.succeeded, s.moved, len(s.violating), s.seed, s.policy, s.elapsed.Round(time.Second))
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

// breakdown lists violation categories, most frequent first, and the
// losses not attributed to the operator.
func (s *summary) breakdown() string {
	var b strings.Builder
	write := func(title string, counts map[string]int, operator bool) {
		if len(counts) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		keys := slices.SortedFunc(maps.Keys(counts), func(x, y string) int {
			return cmp.Or(cmp.Compare(counts[y], counts[x]), cmp.Compare(x, y))
		})
		for _, k := range keys {
			fmt.Fprintf(&b, "  %6d  %s (e.g. episode %d)\n", counts[k], k, s.example[fmt.Sprint(operator, k)])
		}
	}
	write("violations by category (episodes may count in several)", s.categories, true)
	write("bad reads without an operator write (Longhorn and fencers alone; not counted)", s.environment, false)
	if len(s.causes) > 0 {
		fmt.Fprintf(&b, "violating episodes by the hazard whose removal alone ends them:\n")
		keys := slices.SortedFunc(maps.Keys(s.causes), func(x, y string) int {
			return cmp.Or(cmp.Compare(s.causes[y], s.causes[x]), cmp.Compare(x, y))
		})
		for _, k := range keys {
			fmt.Fprintf(&b, "  %6d  %s\n", s.causes[k], k)
		}
	}
	return b.String()
}
