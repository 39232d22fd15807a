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

// component is one control-plane process. Each runs in its own process
// group so that stop reaches anything it spawned, and with a parent-death
// signal so that a crashed test binary does not leave it running.
type component struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has been reaped
	exitErr error         // valid after done is closed
}

// startComponent launches binary with its output appended to logPath.
func startComponent(name, binary string, args, extraEnv []string, logPath string) (*component, error) {
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
	c := &component{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.exitErr = cmd.Wait()
		_ = logFile.Close()
		close(c.done)
	}()
	return c, nil
}

// pid is the process id, which is also its process group id.
func (c *component) pid() int { return c.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (c *component) exited() (bool, error) {
	select {
	case <-c.done:
		if c.exitErr == nil {
			return true, errors.New("exited with status 0")
		}
		return true, c.exitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and
// returns once the process has been reaped and its group is empty. The
// final SIGKILL to the group reaches any child that outlived its parent;
// signals are delivered asynchronously, hence the wait for the group.
func (c *component) stop(grace time.Duration) {
	pgid := c.pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.done
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
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

// failure wraps err with the tail of the component's log, which nearly
// always says why it did not come up.
func (c *component) failure(err error) error {
	return fmt.Errorf("%s: %w\n--- last lines of %s ---\n%s", c.name, err, c.logPath, logTail(c.logPath, 30))
}

// Process is a program started as the cluster starts its components: in a
// process group of its own, killed with its parent, output appended to a
// log file. The harness runs the operator's manager this way, so that its
// memory and CPU are its own.
type Process struct{ c *component }

// StartProcess launches binary with args and extra environment variables.
func StartProcess(name, binary string, args, env []string, logPath string) (*Process, error) {
	c, err := startComponent(name, binary, args, env, logPath)
	if err != nil {
		return nil, err
	}
	return &Process{c: c}, nil
}

// Pid is the process id, which is also its process group id.
func (p *Process) Pid() int { return p.c.pid() }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) { return p.c.exited() }

// Usage is the process's memory and CPU so far; see ProcessUsage.
func (p *Process) Usage() (Usage, error) { return ProcessUsage(p.Pid()) }

// Failure wraps err with the tail of the process's log.
func (p *Process) Failure(err error) error { return p.c.failure(err) }

// Stop sends SIGTERM to the process group, SIGKILL after 10 s, and returns
// once nothing of the group runs.
func (p *Process) Stop() { p.c.stop(stopGrace) }
