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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a child process of the tests: a control-plane component, or
// the operator built from cmd/manager. Each runs in its own process group so
// that Stop reaches anything it spawned, and with a parent-death signal so
// that a crashed test binary does not leave it running.
type Process struct {
	// Name names the process in errors.
	Name string
	// LogPath receives its stdout and stderr, appended.
	LogPath string

	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has been reaped
	exitErr error         // valid after done is closed
}

// StartProcess launches binary with its output appended to logPath and
// extraEnv added to the test's environment.
func StartProcess(name, binary string, args, extraEnv []string, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s log: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.exitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has ended and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		if p.exitErr == nil {
			return true, errors.New("exited with status 0")
		}
		return true, p.exitErr
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace, and
// returns once the process has been reaped and its group is empty. The
// final SIGKILL to the group reaches any child that outlived its parent;
// signals are delivered asynchronously, hence the wait for the group.
func (p *Process) Stop(grace time.Duration) {
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	p.Kill()
}

// Kill sends SIGKILL to the process group, as a crash or a dead machine
// would end it, and returns once the process has been reaped and its group
// is empty (bounded by stopGrace).
func (p *Process) Kill() {
	pgid := p.Pid()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for deadline := time.Now().Add(stopGrace); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(runningInGroup(pgid)) == 0 {
			return
		}
	}
}

// runningInGroup lists the processes of a process group that are not yet
// dead. Zombies are dead: an orphan's zombie waits for init to reap it.
func runningInGroup(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// Format: pid (comm) state ppid pgrp ...; comm may hold anything.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) >= 3 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Failure wraps err with the tail of the process's log, which nearly
// always says why it did not come up.
func (p *Process) Failure(err error) error {
	return fmt.Errorf("%s: %w\n--- last lines of %s ---\n%s", p.Name, err, p.LogPath, logTail(p.LogPath, 30))
}

// Usage is the process's memory and CPU so far; see ProcessUsage.
func (p *Process) Usage() (Usage, error) { return ProcessUsage(p.Pid()) }
