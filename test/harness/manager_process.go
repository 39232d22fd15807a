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

package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

// managerLog is the manager process's log file in the cluster's LogDir.
const managerLog = "manager.log"

// ManagerProcess is the operator's manager, built from ./cmd/manager and
// run as an OS process of its own, so that its memory and CPU can be
// measured (Usage) apart from the harness.
type ManagerProcess struct {
	*cluster.Process
	// LogPath is where its log goes.
	LogPath string
	dir     string
	// pprof is the address of its /debug/pprof endpoints.
	pprof string
}

// BuildManager compiles ./cmd/manager into dir, as the image does, and
// returns the binary's path.
func BuildManager(ctx context.Context, dir string) (string, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/manager")
	cmd.Dir = root
	// Static, as the image builds it (Dockerfile): a cgo build maps libc
	// too, and the benchmarks measure the manager's resident memory.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building ./cmd/manager: %w\n%s", err, out)
	}
	return bin, nil
}

// startManagerProcess builds the manager and runs it as OperatorUser, with
// production flags but for leader election (one replica), the metrics and
// probe servers (nothing scrapes them here) and the profiler, which serves
// on a loopback port for HeapProfile. It returns once both controllers run
// their workers.
func startManagerProcess(ctx context.Context, c *cluster.Cluster) (*ManagerProcess, error) {
	dir, err := os.MkdirTemp("", "s3gw-manager-")
	if err != nil {
		return nil, fmt.Errorf("creating the manager's directory: %w", err)
	}
	m := &ManagerProcess{dir: dir, LogPath: filepath.Join(c.LogDir(), managerLog)}
	if err := m.start(ctx, c); err != nil {
		return nil, errors.Join(err, m.stop())
	}
	return m, nil
}

func (m *ManagerProcess) start(ctx context.Context, c *cluster.Cluster) error {
	bin, err := BuildManager(ctx, m.dir)
	if err != nil {
		return err
	}
	kubeconfig, err := c.KubeconfigFor(OperatorUser)
	if err != nil {
		return err
	}
	ports, err := cluster.FreePorts(1)
	if err != nil {
		return err
	}
	m.pprof = fmt.Sprintf("127.0.0.1:%d", ports[0])
	m.Process, err = cluster.StartProcess("manager", bin,
		[]string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--pprof-bind-address=" + m.pprof,
			"--prepull-image=" + OperatorImage},
		// One heap sample per 64 KiB allocated, not Go's 512 KiB, so the
		// profile splits a heap of a few MiB by owner.
		[]string{"KUBECONFIG=" + kubeconfig, "GODEBUG=memprofilerate=65536"}, m.LogPath)
	if err != nil {
		return err
	}
	// controller-runtime logs "Starting workers" once per controller, after
	// its caches synced.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		if exited, why := m.Exited(); exited {
			return false, errors.Join(errors.New("manager exited"), why)
		}
		log, err := os.ReadFile(m.LogPath)
		return bytes.Count(log, []byte("Starting workers")) >= managerControllers, err
	})
	if err != nil {
		return m.Failure(fmt.Errorf("waiting for the manager's controllers: %w", err))
	}
	return nil
}

// managerControllers is how many controllers cmd/manager runs.
const managerControllers = 2

// HeapProfile returns the manager's heap profile as /debug/pprof/heap
// serves it: with debug 0, pprof's gzipped protobuf; with debug 1, text
// ending in runtime.MemStats. Its in-use figures are as of the last
// garbage collection; fetching it forces none.
func (m *ManagerProcess) HeapProfile(ctx context.Context, debug int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	url := fmt.Sprintf("http://%s/debug/pprof/heap?debug=%d", m.pprof, debug)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the manager's heap profile: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, body)
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the manager's heap profile: %w", err)
	}
	return body, nil
}

func (m *ManagerProcess) stop() error {
	if m.Process != nil {
		m.Stop(10 * time.Second)
	}
	return os.RemoveAll(m.dir)
}
