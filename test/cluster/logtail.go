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
	"io"
	"os"
	"strings"
)

// logTail returns up to n last lines of a log file, or a note saying why it
// cannot. It reads at most the last 64 KiB: control-plane logs grow large.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(log unavailable: " + err.Error() + ")"
	}
	defer func() { _ = f.Close() }()

	const window = 64 << 10
	if info, err := f.Stat(); err == nil && info.Size() > window {
		if _, err := f.Seek(-window, io.SeekEnd); err != nil {
			return "(log unavailable: " + err.Error() + ")"
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "(log unavailable: " + err.Error() + ")"
	}
	return lastLines(string(data), n)
}

// lastLines returns the last n lines of s, without a trailing newline.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
