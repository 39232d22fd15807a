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

// Command mutations runs the world-model safety test against mutated
// copies of the source (go test -overlay; the tree is not touched) and
// reports, per mutation, the operator-caused losses it adds over the
// unmutated code (attributed by replay: the same episode without the
// operator acting). It fails when a mutation adds none: the model cannot
// see that defect.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// report is what the world-model test writes with WORLDMODEL_REPORT: the
// episodes whose losses replay charges to the operator (the same episode
// without it loses nothing, later or less), and those of them in no
// documented unsignalled class.
type report struct {
	Seed     uint64 `json:"seed"`
	Episodes int    `json:"episodes"`
	Operator []int  `json:"operator"`
	Failing  []int  `json:"failing"`
	Shared   int    `json:"shared"`
}

func main() {
	episodes := flag.Int("episodes", 5000, "episodes per run")
	seed := flag.String("seed", "", "WORLDMODEL_SEED for every run (default: the test's fixed seed)")
	only := flag.String("run", "", "only mutations whose name contains this")
	flag.Parse()
	if err := run(*episodes, *seed, *only); err != nil {
		fmt.Fprintln(os.Stderr, "mutations:", err)
		os.Exit(1)
	}
}

func run(episodes int, seed, only string) error {
	tmp, err := os.MkdirTemp("", "worldmodel-mutations-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	// The unmutated code under each run configuration, run when first needed.
	bases := map[runConfig]*report{}
	baseline := func(rc runConfig, overlay string) (*report, error) {
		if b, ok := bases[rc]; ok {
			return b, nil
		}
		b, err := worldmodel(tmp, overlay, episodes, seed, rc)
		if err != nil {
			return nil, fmt.Errorf("unmutated run: %w", err)
		}
		fmt.Printf("%-66s %10d %10s\n", "(none"+rc.note()+")", len(b.Operator), "-")
		bases[rc] = b
		return b, nil
	}
	fmt.Printf("%-66s %10s %10s\n", "mutation", "operator", "new")
	if _, err := baseline(runConfig{}, ""); err != nil {
		return err
	}
	var blind []string
	for i, m := range mutations {
		if !strings.Contains(m.Name, only) {
			continue
		}
		overlay, err := mutate(tmp, i, m.planted())
		if err != nil {
			return err
		}
		rc := runConfig{acceptUnreachableReplicas: m.BehindReachability, hazards: m.Hazards}
		baseOverlay := ""
		if len(m.Behind) > 0 {
			rc.behind = m.Name
			if baseOverlay, err = mutate(tmp, len(mutations)+i, Mutation{Name: m.Name + " (behind)", Edits: m.Behind}); err != nil {
				return err
			}
		}
		base, err := baseline(rc, baseOverlay)
		if err != nil {
			return err
		}
		r, err := worldmodel(tmp, overlay, episodes, seed, rc)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		added := 0
		for _, e := range r.Operator {
			if !slices.Contains(base.Operator, e) {
				added++
			}
		}
		note := ""
		switch {
		case m.ReportOnly:
			note = "  (report only: behind another guard, liveness, or rare)"
		case rc != runConfig{}:
			note = "  (" + strings.TrimPrefix(rc.note(), ", ") + ")"
		}
		fmt.Printf("%-66s %10d %10d%s\n", m.Name, len(r.Operator), added, note)
		if added == 0 && !m.ReportOnly {
			blind = append(blind, m.Name)
		}
	}
	if len(blind) > 0 {
		return fmt.Errorf("the model finds no new operator-caused loss with: %s", strings.Join(blind, "; "))
	}
	return nil
}

// mutate writes the mutated files and an overlay that substitutes them.
func mutate(tmp string, i int, m Mutation) (string, error) {
	sources := map[string]string{} // absolute path → mutated content
	for _, e := range m.Edits {
		path, err := filepath.Abs(e.File)
		if err != nil {
			return "", err
		}
		src, ok := sources[path]
		if !ok {
			data, err := os.ReadFile(path)
			if err != nil {
				return "", err
			}
			src = string(data)
		}
		if n := strings.Count(src, e.Old); n != 1 {
			return "", fmt.Errorf("mutation %q: its old text occurs %d times in %s (want 1): update hack/mutations/mutations.go", m.Name, n, e.File)
		}
		sources[path] = strings.Replace(src, e.Old, e.New, 1)
	}
	replace := map[string]string{}
	for path, src := range sources {
		mutated := filepath.Join(tmp, fmt.Sprintf("m%d-%d-%s", i, len(replace), filepath.Base(path)))
		if err := os.WriteFile(mutated, []byte(src), 0o644); err != nil {
			return "", err
		}
		replace[path] = mutated
	}
	overlay := filepath.Join(tmp, fmt.Sprintf("m%d.json", i))
	data, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return "", err
	}
	return overlay, os.WriteFile(overlay, data, 0o644)
}

// runConfig is how a world-model run differs from the fixed-seed test.
type runConfig struct {
	// acceptUnreachableReplicas runs with release.requireReachableReplicas
	// false (Mutation.BehindReachability).
	acceptUnreachableReplicas bool
	// hazards is WORLDMODEL_HAZARDS; "" the defaults (Mutation.Hazards).
	hazards string
	// behind names the mutation whose Behind edits both runs take (the
	// guard its rule stands behind); "" none.
	behind string
}

func (rc runConfig) note() string {
	var out string
	if rc.acceptUnreachableReplicas {
		out += ", requireReachableReplicas false"
	}
	if rc.hazards != "" {
		out += ", hazards " + rc.hazards
	}
	if rc.behind != "" {
		out += ", behind a guard taken out"
	}
	return out
}

// worldmodel runs the test and reads its report; a failing test (it fails
// on an operator-caused loss in no documented class) is expected, a
// missing report is not.
func worldmodel(tmp, overlay string, episodes int, seed string, rc runConfig) (*report, error) {
	out := filepath.Join(tmp, "report.json")
	_ = os.Remove(out)
	// go test's default 10-minute timeout is too short for 5 000 episodes
	// on a shared 2-core machine.
	args := []string{"test", "-count=1", "-timeout", "2h", "-run", "^TestWorldModel$"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, "./test/worldmodel/")...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("WORLDMODEL_EPISODES=%d", episodes), "WORLDMODEL_REPORT="+out)
	if seed != "" {
		cmd.Env = append(cmd.Env, "WORLDMODEL_SEED="+seed)
	}
	if rc.acceptUnreachableReplicas {
		cmd.Env = append(cmd.Env, "WORLDMODEL_POLICY=accept-unreachable-replicas")
	}
	if rc.hazards != "" {
		cmd.Env = append(cmd.Env, "WORLDMODEL_HAZARDS="+rc.hazards)
	}
	output, runErr := cmd.CombinedOutput()
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("no report (%w):\n%s", runErr, output)
	}
	r := &report{}
	return r, json.Unmarshal(data, r)
}
