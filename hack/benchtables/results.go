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

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"time"
)

// The fields of hack/bench's runs.json, scale.json and requests.json that
// the tables show. Seconds are float64; null stands for a run that never
// got there.

type stats struct {
	Count int      `json:"count"`
	P50   *float64 `json:"p50"`
	P90   *float64 `json:"p90"`
	P99   *float64 `json:"p99"`
	Max   *float64 `json:"max"`
	Min   *float64 `json:"min"`
}

// code is what a result records of the code it measured.
type code struct {
	Version string    `json:"version"`
	Commit  string    `json:"commit"`
	Machine string    `json:"machine"`
	Started time.Time `json:"started"`
}

type failoverResult struct {
	code
	RunsPerMode int            `json:"runsPerMode"`
	Window      time.Duration  `json:"windowNanoseconds"`
	NHCDuration time.Duration  `json:"nhcDurationNanoseconds"`
	Modes       []failoverMode `json:"modes"`
	Requests    *struct {
		Total int `json:"total"`
	} `json:"operatorRequests"`
	Remediations int `json:"remediations"`
}

// failoverMode keeps each run's milestones; its percentiles are derived
// from them, as hack/bench derives them, so that results written before a
// percentile existed (p99, CR → released) show it too.
type failoverMode struct {
	Name  string          `json:"name"`
	Title string          `json:"title"`
	Runs  []runMilestones `json:"runs"`
}

type runMilestones struct {
	Recovered  bool               `json:"recovered"`
	Milestones map[string]float64 `json:"milestones"`
}

type scaleResult struct {
	code
	Fail int        `json:"fail"`
	Runs []scaleRun `json:"runs"`
}

type scaleRun struct {
	Nodes                      int   `json:"nodes"`
	Pods                       int   `json:"pods"`
	Replaced                   int   `json:"replaced"`
	CRToReleased               stats `json:"crToReleased"`
	CRToTicketRemoval          stats `json:"crToTicketRemoval"`
	TicketRemovalToForceDelete stats `json:"ticketRemovalToForceDelete"`
	ForceDeleteToReleaseWrite  stats `json:"forceDeleteToReleaseWrite"`
	ReleaseWriteToReleased     stats `json:"releaseWriteToReleased"`
	NotReadyToCR               stats `json:"notReadyToCR"`
	CRToReady                  stats `json:"crToReady"`
	RTO                        stats `json:"rto"`
	Before                     usage `json:"before"`
	After                      usage `json:"after"`
	Heap                       []struct {
		Label string `json:"label"`
		Live  int64  `json:"liveBytes"`
	} `json:"heap"`
	Requests struct {
		Total int `json:"total"`
	} `json:"requests"`
}

type usage struct {
	PeakRSS int64         `json:"peakRSSBytes"`
	RSS     int64         `json:"rssBytes"`
	Anon    int64         `json:"rssAnonBytes"`
	File    int64         `json:"rssFileBytes"`
	CPU     time.Duration `json:"cpuNanoseconds"`
}

type requestsResult struct {
	code
	Happy []struct {
		Node          string        `json:"node"`
		CRToSucceeded count         `json:"crToSucceeded"`
		Took          time.Duration `json:"tookNanoseconds"`
		AfterSucceded count         `json:"afterSucceeded10s"`
		CleanUp       count         `json:"cleanUp"`
	} `json:"happy"`
	WaitWindow   time.Duration `json:"waitWindowNanoseconds"`
	Waiting      count         `json:"waiting"`
	WaitingFirst count         `json:"waitingFirst"`
	IdleWindow   time.Duration `json:"idleWindowNanoseconds"`
	Idle         count         `json:"idle"`
}

type count struct {
	Total int `json:"total"`
}

// result is one directory of bench/results.
type result struct {
	Dir       string // its name
	Benchmark string // failover, scale or requests
	// Variant is what the name adds after the benchmark: the node counts of
	// a scale result, or a variant's own name (-nhc-60s). Only a failover
	// or requests result without one counts as the latest of its benchmark.
	Variant  string
	Failover *failoverResult
	Scale    *scaleResult
	Requests *requestsResult
}

func (r *result) code() code {
	switch {
	case r.Failover != nil:
		return r.Failover.code
	case r.Scale != nil:
		return r.Scale.code
	default:
		return r.Requests.code
	}
}

// The benchmarks, as result names spell them.
const (
	failoverBenchmark = "failover"
	scaleBenchmark    = "scale"
	requestsBenchmark = "requests"
)

// resultName is <date>-<benchmark>[-<variant>], as hack/bench names them.
var resultName = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}-(failover|scale|requests)(-[a-z0-9-]+)?$`)

// scaleVariant is the node counts of a scale result's name.
var scaleVariant = regexp.MustCompile(`^(-\d+)+$`)

// loadResults reads every result directory in dir, oldest first.
func loadResults(dir string) ([]*result, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var kept []*result
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m := resultName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("bench/results/%s: not named <date>-<benchmark>[-<variant>]", e.Name())
		}
		r := &result{Dir: e.Name(), Benchmark: m[1], Variant: m[2]}
		var file string
		var into any
		switch r.Benchmark {
		case failoverBenchmark:
			r.Failover, file = &failoverResult{}, "runs.json"
			into = r.Failover
		case scaleBenchmark:
			r.Scale, file = &scaleResult{}, "scale.json"
			into = r.Scale
		default:
			r.Requests, file = &requestsResult{}, "requests.json"
			into = r.Requests
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), file))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, into); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", e.Name(), file, err)
		}
		if c := r.code(); c.Version == "" || c.Started.IsZero() {
			return nil, fmt.Errorf("%s/%s records no version or start time", e.Name(), file)
		}
		kept = append(kept, r)
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].code().Started.Before(kept[j].code().Started) })
	return kept, nil
}

// latest is the newest result of benchmark without a variant, nil if none.
func latest(kept []*result, benchmark string) *result {
	for _, r := range slices.Backward(kept) {
		if r.Benchmark == benchmark && r.Variant == "" {
			return r
		}
	}
	return nil
}

// latestScale is, for each node count any scale result measured, the
// newest run at that count and its result, by node count.
func latestScale(kept []*result) []scaleColumn {
	byNodes := map[int]scaleColumn{}
	for _, r := range kept {
		if r.Scale == nil || !scaleVariant.MatchString(r.Variant) {
			continue
		}
		for _, run := range r.Scale.Runs {
			byNodes[run.Nodes] = scaleColumn{r, run}
		}
	}
	cols := make([]scaleColumn, 0, len(byNodes))
	for _, c := range byNodes {
		cols = append(cols, c)
	}
	slices.SortFunc(cols, func(a, b scaleColumn) int { return a.Run.Nodes - b.Run.Nodes })
	return cols
}

type scaleColumn struct {
	Result *result
	Run    scaleRun
}

// named is the result dir, or an error naming what is kept.
func named(kept []*result, dir string) (*result, error) {
	for _, r := range kept {
		if r.Dir == dir {
			return r, nil
		}
	}
	return nil, fmt.Errorf("no result bench/results/%s", dir)
}

// mode is the mode of a failover result by name, nil if it has none.
func (f *failoverResult) mode(name string) *failoverMode {
	for i := range f.Modes {
		if f.Modes[i].Name == name {
			return &f.Modes[i]
		}
	}
	return nil
}

// The milestones the percentiles are derived from, as hack/bench names
// them; the node was lost at 0 s.
const (
	crCreated = "S3GWRemediation created"
	released  = "attachment released from the dead node"
	ready     = "replacement Ready"
)

// rto is node lost → replacement Ready; +Inf for a run never Ready.
func (m *failoverMode) rto() stats {
	v := make([]float64, 0, len(m.Runs))
	for _, run := range m.Runs {
		v = append(v, milestoneOrInf(run.Milestones, ready))
	}
	return newStats(v)
}

// crToReady and crToReleased run from S3GWRemediation created to the
// replacement Ready and to no attachment left on the dead node, for modes
// with an operator; a run that never got there counts as +Inf.
func (m *failoverMode) crToReady() stats    { return m.fromCR(ready) }
func (m *failoverMode) crToReleased() stats { return m.fromCR(released) }

func (m *failoverMode) fromCR(milestone string) stats {
	var v []float64
	operator := slices.ContainsFunc(m.Runs, func(r runMilestones) bool { _, ok := r.Milestones[crCreated]; return ok })
	for _, run := range m.Runs {
		created, ok := run.Milestones[crCreated]
		switch {
		case ok:
			v = append(v, milestoneOrInf(run.Milestones, milestone)-created)
		case operator && !run.Recovered:
			v = append(v, math.Inf(1))
		}
	}
	return newStats(v)
}

func milestoneOrInf(milestones map[string]float64, name string) float64 {
	if s, ok := milestones[name]; ok {
		return s
	}
	return math.Inf(1)
}

// median is the nearest-rank median of a milestone over the runs that
// reached it, and how many did.
func (m *failoverMode) median(milestone string) (*float64, int) {
	var v []float64
	for _, run := range m.Runs {
		if s, ok := run.Milestones[milestone]; ok {
			v = append(v, s)
		}
	}
	return newStats(v).P50, len(v)
}

func (m *failoverMode) recovered() int {
	n := 0
	for _, run := range m.Runs {
		if run.Recovered {
			n++
		}
	}
	return n
}

// newStats is hack/bench's: nearest-rank percentiles, +Inf as nil.
func newStats(v []float64) stats {
	s := stats{Count: len(v)}
	if len(v) == 0 {
		return s
	}
	slices.Sort(v)
	at := func(p float64) *float64 {
		f := v[max(0, min(int(math.Ceil(p*float64(len(v))))-1, len(v)-1))]
		if math.IsInf(f, 0) {
			return nil
		}
		return &f
	}
	s.P50, s.P90, s.P99, s.Max, s.Min = at(0.5), at(0.9), at(0.99), at(1), at(0)
	return s
}
