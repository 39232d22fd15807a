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
}

// BuildManager compiles ./cmd/manager into dir and returns the binary's path.
func BuildManager(ctx context.Context, dir string) (string, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "manager")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/manager")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building ./cmd/manager: %w\n%s", err, out)
	}
	return bin, nil
}

// startManagerProcess builds the manager and runs it as OperatorUser, with
// production flags but for leader election (one replica) and the metrics
// and probe servers (nothing scrapes them here). It returns once both
// controllers run their workers.
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
	m.Process, err = cluster.StartProcess("manager", bin,
		[]string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0"},
		[]string{"KUBECONFIG=" + kubeconfig}, m.LogPath)
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

func (m *ManagerProcess) stop() error {
	if m.Process != nil {
		m.Stop(10 * time.Second)
	}
	return os.RemoveAll(m.dir)
}
