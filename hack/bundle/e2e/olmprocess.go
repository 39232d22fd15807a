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

package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// OLMOptions say how to run OLM's olm operator, or its catalog operator.
type OLMOptions struct {
	// Binary is the olm executable: bin/olm, the Makefile's $(OLM); or the
	// catalog operator's, bin/olm-catalog ($(OLM_CATALOG)).
	Binary string
	// Kubeconfig is the admin kubeconfig of the cluster. The olm operator
	// reads it through KUBECONFIG: it parses its flags with pflag, so
	// controller-runtime's --kubeconfig flag is not available.
	Kubeconfig string
	// Namespace is passed as --namespace, as OLM's own Deployment passes the
	// namespace it runs in. v0.38.0 uses it only for OpenShift's
	// ClusterOperator status, which is off (--writeStatusName="").
	Namespace string
	// LogPath receives the process's stdout and stderr.
	LogPath string
	// Debug turns on OLM's debug log level.
	Debug bool
}

// Args are the olm operator's command-line arguments: those of the
// upstream olm-operator Deployment (deploy/chart), without TLS. Without
// --tls-cert and --tls-key, OLM serves /healthz and /metrics in plain HTTP
// on :8080; no flag moves that port, and OLM only logs an error if it is
// taken, so the proof does not rely on it.
//
// The catalog operator takes the same flags (its --namespace is the global
// catalog namespace); it serves on :8080 too, so when both run one of them
// logs that the port is taken.
func (o OLMOptions) Args() []string {
	args := []string{"--namespace=" + o.Namespace, "--writeStatusName="}
	if o.Debug {
		args = append(args, "--debug")
	}
	return args
}

// OLM is a running olm operator.
type OLM struct {
	// LogPath is where its output goes.
	LogPath string

	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has been reaped
	exitErr error         // valid after done is closed
}

// StartOLM starts the olm operator in its own process group, killed with
// the test process if that dies first. Stop it with Stop.
func StartOLM(o OLMOptions) (*OLM, error) {
	if err := checkExecutable(o.Binary); err != nil {
		return nil, fmt.Errorf("%w (`make test-olm` and `make test-olm-upgrade` build OLM's operators into bin/)", err)
	}
	logFile, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the olm log: %w", err)
	}
	cmd := exec.Command(o.Binary, o.Args()...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// KUBERNETES_SERVICE_HOST would make client-go prefer an in-cluster
	// configuration when the test itself runs in a pod.
	cmd.Env = append(withoutEnv(os.Environ(), "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBECONFIG"),
		"KUBECONFIG="+o.Kubeconfig)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting olm: %w", err)
	}
	p := &OLM{LogPath: o.LogPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.exitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id, which is also its process group id.
func (p *OLM) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *OLM) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.exitErr
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, waits up to grace for the olm
// operator to exit, then kills the group. It returns an error unless the
// operator exited by itself within grace with status 0, which is what OLM
// does on SIGTERM, or in OLM's own shutdown race (ShutdownRacePanic). Stop may be called more than once.
func (p *OLM) Stop(grace time.Duration) error {
	pgid := p.Pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	var err error
	select {
	case <-p.done:
		if p.exitErr != nil && !ShutdownRacePanic(logTail(p.LogPath, 40)) {
			err = fmt.Errorf("%s exited with %w after SIGTERM", filepath.Base(p.cmd.Path), p.exitErr)
		}
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
		err = fmt.Errorf("%s ignored SIGTERM for %s and was killed", filepath.Base(p.cmd.Path), grace)
	}
	// Nothing of the group may outlive the test.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return err
}

// ShutdownRacePanic reports whether an OLM log ends in the panic of OLM's
// own shutdown race, which is not ours to fail on. In v0.38.0
// (pkg/lib/queueinformer/queueinformer_operator.go), (*operator).Run shuts
// the queues down and closes atLevel as soon as its context ends, without
// waiting for the workers; a worker whose sync was in flight then reaches
// processNextWorkItem's `o.syncCh <- err` (syncCh is atLevel) and panics.
// Any other exit status after SIGTERM is still an error.
func ShutdownRacePanic(log string) bool {
	i := strings.Index(log, "panic: send on closed channel")
	return i >= 0 && strings.Contains(log[i:], "queueinformer.(*operator).processNextWorkItem")
}

// LogTail returns the last n lines of the log.
func (p *OLM) LogTail(n int) string { return logTail(p.LogPath, n) }

func checkExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("missing binary: %w", err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

func withoutEnv(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// logTail reads at most the last 256 KiB of a log and returns its last n
// lines; OLM logs long lines.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(log unavailable: " + err.Error() + ")"
	}
	defer func() { _ = f.Close() }()
	const window = 256 << 10
	if info, err := f.Stat(); err == nil && info.Size() > window {
		if _, err := f.Seek(-window, io.SeekEnd); err != nil {
			return "(log unavailable: " + err.Error() + ")"
		}
	}
	data, err := io.ReadAll(f)
	if err != nil && !errors.Is(err, io.EOF) {
		return "(log unavailable: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
