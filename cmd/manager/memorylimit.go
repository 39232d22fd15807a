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
	"fmt"
	"strconv"
	"strings"
)

// memoryLimitEnv is filled by the Deployment from the container's memory
// limit (downward API, resourceFieldRef limits.memory, in bytes).
const memoryLimitEnv = "MEMORY_LIMIT"

// gcShare of the container's limit is the Go runtime's soft memory limit:
// the garbage collector works harder as the heap nears it, instead of
// letting garbage double the live heap (GOGC=100) into an OOM kill. The
// rest is for what the runtime does not count: the binary's text and
// memory the kernel charges to the container.
const gcShare = 0.9

// softMemoryLimit is the soft memory limit to set, in bytes, and why; 0
// when there is none to set: GOMEMLIMIT given (the runtime applied it
// already), or no container limit.
func softMemoryLimit(getenv func(string) string) (int64, string, error) {
	if v := getenv("GOMEMLIMIT"); v != "" {
		return 0, "GOMEMLIMIT=" + v + " is set", nil
	}
	v := strings.TrimSpace(getenv(memoryLimitEnv))
	if v == "" {
		return 0, memoryLimitEnv + " is not set", nil
	}
	limit, err := strconv.ParseInt(v, 10, 64)
	if err != nil || limit <= 0 {
		return 0, "", fmt.Errorf("%s=%q is not a number of bytes", memoryLimitEnv, v)
	}
	return int64(float64(limit) * gcShare), fmt.Sprintf("%.0f %% of the container's memory limit (%s=%d)", 100*gcShare, memoryLimitEnv, limit), nil
}

// gcPercent is the manager's GOGC unless the environment sets one: at 30
// the collector runs when the heap has grown by 30 %, not doubled, which
// keeps a failure burst's garbage from doubling the manager's memory, for
// about 2 s more CPU in a burst of 20 failovers
// (docs/design/manager-memory.md).
const gcPercent = 30

// gcPercentToSet is the GOGC to set and why; 0 when GOGC is given (the
// runtime applied it already).
func gcPercentToSet(getenv func(string) string) (int, string) {
	if v := getenv("GOGC"); v != "" {
		return 0, "GOGC=" + v + " is set"
	}
	return gcPercent, "the manager's default"
}
