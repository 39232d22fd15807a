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

package far

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Attempt is one run of the agent.
type Attempt struct {
	Command        []string
	Stdout, Stderr string
	Err            error
}

// Outcome is how a fence ended: Err is the last attempt's error, nil when
// the agent exited 0; TimedOut is FAR's FenceAgentTimedOut, which it reports
// only for an error the wait package calls an interruption (a killed agent
// is an exec.ExitError, so FAR reports it as failed).
type Outcome struct {
	Attempts []Attempt
	Err      error
	TimedOut bool
}

// Executor runs fence agents as FAR's cli.Executer does: one goroutine per
// CR UID, up to retryCount attempts a fixed interval apart, each bounded by
// the time-out; an error the wait package calls an interruption ends the
// retries at once. Remove cancels a running fence; a cancelled fence
// reports nothing.
type Executor struct {
	// Run runs one attempt; nil runs the binary (exec.CommandContext).
	Run func(ctx context.Context, command []string) (stdout, stderr string, err error)

	mu       sync.Mutex
	routines map[types.UID]context.CancelFunc
}

// Start runs the command for the CR unless a fence for it runs already,
// and calls done with the outcome unless the fence was cancelled.
func (e *Executor) Start(ctx context.Context, uid types.UID, command []string, retryCount int, interval, timeout time.Duration,
	done func(context.Context, Outcome)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, running := e.routines[uid]; running {
		return
	}
	if e.routines == nil {
		e.routines = map[types.UID]context.CancelFunc{}
	}
	ctx, cancel := context.WithCancel(ctx)
	e.routines[uid] = cancel
	go func() {
		out, cancelled := e.runWithRetry(ctx, command, retryCount, interval, timeout)
		if !cancelled {
			done(ctx, out)
		}
	}()
}

// Exists reports whether a fence for the CR was started and not removed.
func (e *Executor) Exists(uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.routines[uid]
	return ok
}

// Remove cancels the CR's fence and forgets it.
func (e *Executor) Remove(uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if cancel, ok := e.routines[uid]; ok {
		cancel()
		delete(e.routines, uid)
	}
}

// runWithRetry is runWithRetry with wait.ExponentialBackoffWithContext at
// factor 1; cancelled reports a fence cancelled through its context, which
// fenceAgentRoutine returns from without a status.
func (e *Executor) runWithRetry(ctx context.Context, command []string, retryCount int, interval, timeout time.Duration) (out Outcome, cancelled bool) {
	run := e.Run
	if run == nil {
		run = execute
	}
	backoff := wait.Backoff{Steps: retryCount, Duration: interval, Factor: 1}
	retryErr := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		attemptCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		a := Attempt{Command: command}
		a.Stdout, a.Stderr, a.Err = run(attemptCtx, command)
		out.Attempts = append(out.Attempts, a)
		out.Err = a.Err
		switch {
		case a.Err == nil:
			return true, nil
		case wait.Interrupted(a.Err):
			return false, a.Err
		default:
			return false, nil
		}
	})
	if errors.Is(retryErr, context.Canceled) {
		return out, true
	}
	out.TimedOut = out.Err != nil && wait.Interrupted(out.Err)
	return out, false
}

// execute is cli's run: the binary with the parameters, no shell.
func execute(ctx context.Context, command []string) (string, string, error) {
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// RequireAgent returns a clear error when the fence agent is not in PATH:
// tests that run one must fail, not skip, without it.
func RequireAgent(agent string) error {
	if _, err := exec.LookPath(agent); err != nil {
		return fmt.Errorf("fence agent %s not found in PATH (/usr/sbin included?): install Debian's fence-agents package "+
			"(apt-get install -y fence-agents), as .ci/run does: %w", agent, err)
	}
	return nil
}
