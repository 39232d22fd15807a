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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestCommands(t *testing.T) {
	idled := false
	idle := func() { idled = true }
	if err := run([]string{"pulled"}, idle); err != nil {
		t.Fatalf("pulled: %v", err)
	}
	if err := run([]string{"idle"}, idle); err != nil || !idled {
		t.Fatalf("idle: %v, waited %v", err, idled)
	}
	for _, args := range [][]string{nil, {"run"}, {"install"}, {"install", "a", "b"}} {
		if err := run(args, idle); !errors.Is(err, usage) {
			t.Errorf("%q: %v, want the usage", args, err)
		}
	}
}

// The install command's copy runs where the original does, as any user:
// here, it is built and its copy run with "pulled".
func TestInstalledCopyRuns(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "prepull")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building: %v\n%s", err, out)
	}
	dst := filepath.Join(dir, "copy")
	if out, err := exec.Command(bin, "install", dst).CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	info, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o555 {
		t.Errorf("copy's mode %v, want r-xr-xr-x", info.Mode().Perm())
	}
	if out, err := exec.Command(dst, "pulled").CombinedOutput(); err != nil {
		t.Fatalf("the copy: %v\n%s", err, out)
	}
}
