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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestMutationsStillApply keeps the planted defects in step with the code:
// a refactor that moves or rewords a mutated line, or leaves a mutation that
// no longer compiles, fails here, in make test, rather than in the next make
// test-mutations.
func TestMutationsStillApply(t *testing.T) {
	t.Chdir("../..") // edits name files from the repository root
	if _, err := os.Stat("go.mod"); err != nil {
		t.Fatalf("not at the repository root: %v", err)
	}
	tmp := t.TempDir()
	for i, m := range mutations {
		m = m.planted()
		overlay, err := mutate(tmp, i, m)
		if err != nil {
			t.Error(err)
			continue
		}
		var packages []string
		for _, e := range m.Edits {
			if dir := "./" + filepath.Dir(e.File); !slices.Contains(packages, dir) {
				packages = append(packages, dir)
			}
		}
		build := exec.Command("go", append([]string{"build", "-overlay", overlay}, packages...)...)
		if out, err := build.CombinedOutput(); err != nil {
			t.Errorf("mutation %q does not compile: %v\n%s", m.Name, err, out)
		}
	}
}
