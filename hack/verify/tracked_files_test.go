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

package verify

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrackedFilesCheck runs hack/verify-tracked-files.sh in a scratch git
// repository holding one planted file each time.
func TestTrackedFilesCheck(t *testing.T) {
	script, err := filepath.Abs("../verify-tracked-files.sh")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("/proc/self/exe") // this test's own binary: ELF
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		file       string
		content    []byte
		mode       os.FileMode
		wantFail   bool
		wantStderr string
	}{
		{name: "source file", file: "main.go", content: []byte("package main\n"), mode: 0o644},
		{name: "executable script", file: "run.sh", content: []byte("#!/bin/sh\necho ok\n"), mode: 0o755},
		{name: "file of exactly 1 MiB", file: "big.txt", content: bytes.Repeat([]byte("a"), 1<<20), mode: 0o644},
		{name: "gzip data, not executable", file: "heap.pb.gz", content: []byte{0x1f, 0x8b, 8, 0, 0, 0}, mode: 0o644},
		{name: "file over 1 MiB", file: "big.txt", content: bytes.Repeat([]byte("a"), 1<<20+1), mode: 0o644,
			wantFail: true, wantStderr: "over 1 MiB"},
		{name: "ELF binary, executable", file: "mutations", content: self[:4096], mode: 0o755,
			wantFail: true, wantStderr: "executable binary"},
		{name: "ELF binary, mode 644", file: "manager", content: self[:4096], mode: 0o644,
			wantFail: true, wantStderr: "executable binary"},
		{name: "Mach-O binary", file: "tool", content: []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, mode: 0o644,
			wantFail: true, wantStderr: "executable binary"},
		{name: "PE binary", file: "tool.exe", content: append([]byte("MZ\x90\x00"), make([]byte, 64)...), mode: 0o644,
			wantFail: true, wantStderr: "executable binary"},
		{name: "executable with NUL bytes", file: "blob", content: []byte("#!x\x00\x01"), mode: 0o755,
			wantFail: true, wantStderr: "executable binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			git := func(args ...string) {
				t.Helper()
				cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			git("init", "-q")
			if err := os.MkdirAll(filepath.Join(repo, "hack"), 0o755); err != nil {
				t.Fatal(err)
			}
			body, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			copied := filepath.Join(repo, "hack", "verify-tracked-files.sh")
			if err := os.WriteFile(copied, body, 0o755); err != nil { //nolint:gosec // a script to run
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(repo, tt.file), tt.content, tt.mode); err != nil {
				t.Fatal(err)
			}
			git("add", ".")

			var stderr bytes.Buffer
			cmd := exec.Command(copied)
			cmd.Stderr = &stderr
			err = cmd.Run()
			if failed := err != nil; failed != tt.wantFail {
				t.Fatalf("check failed = %v, want %v (err %v); stderr:\n%s", failed, tt.wantFail, err, stderr.String())
			}
			if tt.wantFail && (!strings.Contains(stderr.String(), tt.wantStderr) || !strings.Contains(stderr.String(), tt.file)) {
				t.Errorf("stderr does not name %q as %q:\n%s", tt.file, tt.wantStderr, stderr.String())
			}
		})
	}
}
