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
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// machineLoad tells how much of the machine a benchmark had: the CPU time
// the whole machine spent, less what the benchmark and the processes it
// started and reaped (cluster components, the manager) spent, is what other
// work took meanwhile. flock keeps other benchmarks and suites out, not
// other engineers' builds and narrow tests.
type machineLoad struct {
	began      time.Time
	busy, mine time.Duration
}

func startMachineLoad() (*machineLoad, error) {
	busy, err := machineBusy()
	if err != nil {
		return nil, err
	}
	return &machineLoad{began: time.Now(), busy: busy, mine: ownCPU()}, nil
}

// describe reports the other work's share, once the benchmark's processes
// have been stopped and reaped.
func (m *machineLoad) describe(cpus int) string {
	busy, err := machineBusy()
	if err != nil {
		return "other work on the machine: unknown (" + err.Error() + ")"
	}
	wall := time.Since(m.began)
	other := (busy - m.busy) - (ownCPU() - m.mine)
	return fmt.Sprintf("other work on the machine (builds and narrow tests of other engineers; flock kept heavy runs out) "+
		"used %.0f CPU-seconds of the %.0f available (%.0f %%)",
		max(other, 0).Seconds(), (wall * time.Duration(cpus)).Seconds(), 100*max(other, 0).Seconds()/(wall*time.Duration(cpus)).Seconds())
}

// machineBusy is the CPU time all CPUs spent outside idle and iowait since
// boot, from /proc/stat.
func machineBusy() (time.Duration, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 8 || fields[0] != "cpu" {
		return 0, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	var ticks int64
	for i, f := range fields[1:8] { // user nice system idle iowait irq softirq
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100, nil
}

// ownCPU is the CPU time of this process and of its reaped children.
func ownCPU() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
