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

package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"", 3, ""},
	} {
		if got := lastLines(tc.in, tc.n); got != tc.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestLogTailReadsOnlyTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	big := strings.Repeat("noise\n", 20000) + "boom: port in use\n"
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := logTail(path, 1); got != "boom: port in use" {
		t.Errorf("logTail = %q", got)
	}
}

func TestLogTailOfMissingFileSaysSo(t *testing.T) {
	if got := logTail(filepath.Join(t.TempDir(), "none.log"), 3); !strings.HasPrefix(got, "(log unavailable") {
		t.Errorf("logTail = %q", got)
	}
}
