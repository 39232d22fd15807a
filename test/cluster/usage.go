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
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's CPU
// times: 100 on every Linux architecture Go supports.
const clockTicks = 100

// Usage is what a process has cost so far, as the kernel accounts it.
type Usage struct {
	// PeakRSS is the resident set's high-water mark (VmHWM).
	PeakRSS int64 `json:"peakRSSBytes"`
	// RSS is the resident set now (VmRSS): RSSAnon (heap, stacks) plus
	// RSSFile (mapped files, mostly the binary's code and read-only data).
	RSS     int64 `json:"rssBytes"`
	RSSAnon int64 `json:"rssAnonBytes"`
	RSSFile int64 `json:"rssFileBytes"`
	// CPU is user plus system time.
	CPU time.Duration `json:"cpuNanoseconds"`
}

// ProcessUsage reads /proc/<pid>/status and /proc/<pid>/stat.
func ProcessUsage(pid int) (Usage, error) {
	var u Usage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	for line := range strings.Lines(string(status)) {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmHWM":
			dst = &u.PeakRSS
		case "VmRSS":
			dst = &u.RSS
		case "RssAnon":
			dst = &u.RSSAnon
		case "RssFile":
			dst = &u.RSSFile
		default:
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return u, fmt.Errorf("parsing %s of process %d: %w", key, pid, err)
		}
		*dst = kib * 1024
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, fmt.Errorf("reading the stat of process %d: %w", pid, err)
	}
	// Fields after "(comm)": state is the first, utime the 12th, stime the 13th.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 13 {
		return u, fmt.Errorf("short stat of process %d: %q", pid, stat)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return u, fmt.Errorf("parsing the CPU time of process %d: %w", pid, err)
		}
		ticks += n
	}
	u.CPU = time.Duration(ticks) * time.Second / clockTicks
	return u, nil
}
