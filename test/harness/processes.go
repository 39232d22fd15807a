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
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/s3gw-tech/s3gw-remediation/internal/template"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

// LeaderElectionID is the manager's Lease (cmd/manager).
const LeaderElectionID = "s3gw-remediation.medik8s.io"

// restartDelay is how long a supervised manager that exited on its own
// stays down before it is started again, as the kubelet restarts a
// crashed container (without its growing back-off).
const restartDelay = time.Second

// ProcessOptions configure a manager process.
type ProcessOptions struct {
	// LeaderElection runs the manager with --leader-elect, as the
	// Deployment does.
	LeaderElection bool
	// LeaseDuration, RenewDeadline and RetryPeriod override the manager's
	// leader election defaults when set.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// InManagerNamespace gives the manager its namespace as the Deployment
	// does (DEPLOYMENT_NAMESPACE): it then creates the default template
	// there at start-up, which an install's NodeHealthCheck references.
	InManagerNamespace bool
}

// env is the environment the process adds to the test's.
func (o ProcessOptions) env(kubeconfig string) []string {
	env := []string{"KUBECONFIG=" + kubeconfig}
	if o.InManagerNamespace {
		env = append(env, template.NamespaceEnv+"="+ManagerNamespace)
	}
	return env
}

func (o ProcessOptions) args() []string {
	var args []string
	if o.LeaderElection {
		args = append(args, "--leader-elect", "--leader-election-namespace="+ManagerNamespace)
	}
	for flag, d := range map[string]time.Duration{
		"--leader-elect-lease-duration": o.LeaseDuration,
		"--leader-elect-renew-deadline": o.RenewDeadline,
		"--leader-elect-retry-period":   o.RetryPeriod,
	} {
		if d > 0 {
			args = append(args, flag+"="+d.String())
		}
	}
	return args
}

// OperatorProcess is the manager built from cmd/manager, running as a
// process of its own under the manager's ServiceAccount, as one replica of
// the Deployment would on Node. Node is bookkeeping: the process is not
// tied to the simulated node, FailOperatorNode kills both together.
//
// It is supervised like a container with restartPolicy Always: if it exits
// on its own (for instance after losing its Lease), it is started again.
// Kill and Stop end it for good until Start.
type OperatorProcess struct {
	Name string
	Node string

	env     *Env
	binary  string
	args    []string
	environ []string
	logPath string
	metrics string // host:port, plain HTTP
	probes  string

	mu         sync.Mutex
	proc       *cluster.Process
	down       bool // ended by the test, not to be restarted
	startedAt  time.Time
	selfExits  int
	supervisor chan struct{} // closed when the supervisor of proc returns
}

// StartOperatorProcess builds cmd/manager (once per Env), gives the manager
// its ServiceAccount, RBAC and admission policies (once per Env), and
// starts one manager process, returning once it serves its health probe.
func (e *Env) StartOperatorProcess(ctx context.Context, name, node string, opts ProcessOptions) (*OperatorProcess, error) {
	if err := e.prepareProcesses(ctx); err != nil {
		return nil, err
	}
	ports, err := cluster.FreePorts(2)
	if err != nil {
		return nil, err
	}
	p := &OperatorProcess{
		Name: name, Node: node, env: e,
		binary:  e.managerBinary,
		environ: opts.env(e.managerKubeconfig),
		logPath: filepath.Join(e.Cluster.LogDir(), "manager-"+name+".log"),
		metrics: "127.0.0.1:" + strconv.Itoa(ports[0]),
		probes:  "127.0.0.1:" + strconv.Itoa(ports[1]),
		down:    true,
	}
	p.args = append([]string{
		"--metrics-bind-address=" + p.metrics, "--metrics-secure=false",
		"--health-probe-bind-address=" + p.probes,
		"--zap-log-level=info", "--prepull-image=" + OperatorImage,
	}, opts.args()...)
	e.addProcess(p)
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Start launches the process (again) and waits until its health probe
// answers. It is a no-op while the process runs.
func (p *OperatorProcess) Start(ctx context.Context) error {
	p.mu.Lock()
	if !p.down {
		p.mu.Unlock()
		return nil
	}
	p.down = false
	if err := p.launchLocked(); err != nil {
		p.down = true
		p.mu.Unlock()
		return err
	}
	proc := p.proc
	p.mu.Unlock()
	return p.waitHealthy(ctx, proc)
}

// launchLocked starts the process and its supervisor; p.mu is held.
func (p *OperatorProcess) launchLocked() error {
	proc, err := cluster.StartProcess("manager "+p.Name, p.binary, p.args, p.environ, p.logPath)
	if err != nil {
		return err
	}
	p.proc, p.startedAt = proc, time.Now()
	done := make(chan struct{})
	p.supervisor = done
	go p.supervise(proc, done)
	return nil
}

// supervise restarts proc when it ends on its own.
func (p *OperatorProcess) supervise(proc *cluster.Process, done chan struct{}) {
	defer close(done)
	<-proc.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down || p.proc != proc {
		return
	}
	p.selfExits++
	_, exitErr := proc.Exited()
	p.env.log.Info("Manager process exited on its own; restarting it", "process", p.Name, "exit", exitErr)
	p.mu.Unlock()
	<-time.After(restartDelay)
	p.mu.Lock()
	if p.down || p.proc != proc {
		return
	}
	if err := p.launchLocked(); err != nil {
		p.env.log.Error(err, "Restarting the manager process", "process", p.Name)
		p.down = true
	}
}

func (p *OperatorProcess) waitHealthy(ctx context.Context, proc *cluster.Process) error {
	client := &http.Client{Timeout: time.Second}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if exited, err := proc.Exited(); exited {
			return false, proc.Failure(fmt.Errorf("exited before serving its health probe: %w", err))
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.probes+"/healthz", nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return proc.Failure(fmt.Errorf("waiting for the health probe: %w", err))
	}
	return nil
}

// Kill ends the process with SIGKILL, as a crash, an OOM kill or the death
// of its node would, and keeps it down. It returns when the process is
// gone and reports how long it had been running.
func (p *OperatorProcess) Kill() time.Duration {
	return p.end(func(proc *cluster.Process) { proc.Kill() })
}

// Stop ends the process with SIGTERM, as a drain or a rollout would, and
// keeps it down.
func (p *OperatorProcess) Stop() { p.end(func(proc *cluster.Process) { proc.Stop(10 * time.Second) }) }

func (p *OperatorProcess) end(how func(*cluster.Process)) time.Duration {
	p.mu.Lock()
	p.down = true
	proc, started, supervisor := p.proc, p.startedAt, p.supervisor
	p.mu.Unlock()
	if proc == nil {
		return 0
	}
	how(proc)
	<-supervisor
	return time.Since(started)
}

// SelfExits counts the times the process exited without the test ending
// it (and was restarted).
func (p *OperatorProcess) SelfExits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.selfExits
}

// MetricsURL is where the process serves its metrics, in plain HTTP.
func (p *OperatorProcess) MetricsURL() string { return "http://" + p.metrics + "/metrics" }

// Leading reports whether the process holds the Lease, from its
// leader_election_master_status metric.
func (p *OperatorProcess) Leading(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.MetricsURL(), nil)
	if err != nil {
		return false, err
	}
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return false, fmt.Errorf("scraping %s: %w", p.Name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	want := `leader_election_master_status{name="` + LeaderElectionID + `"}`
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if value, ok := strings.CutPrefix(sc.Text(), want+" "); ok {
			return value == "1", nil
		}
	}
	return false, sc.Err()
}

// WaitLeader returns the process that leads, once exactly one of procs
// reports it does.
func WaitLeader(ctx context.Context, timeout time.Duration, procs ...*OperatorProcess) (*OperatorProcess, error) {
	var leader *OperatorProcess
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		leader = nil
		for _, p := range procs {
			leading, err := p.Leading(ctx)
			if err != nil {
				continue // a process that is down leads nothing
			}
			if leading {
				if leader != nil {
					return false, nil
				}
				leader = p
			}
		}
		return leader != nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for one leader among %d manager processes: %w", len(procs), err)
	}
	return leader, nil
}

// FailOperatorNode fails the process's node and kills the process with it.
func (e *Env) FailOperatorNode(ctx context.Context, p *OperatorProcess) error {
	if err := e.Cluster.FailNode(ctx, p.Node); err != nil {
		return err
	}
	p.Kill()
	return nil
}

func (e *Env) addProcess(p *OperatorProcess) {
	e.procMu.Lock()
	defer e.procMu.Unlock()
	e.processes = append(e.processes, p)
}

// stopProcesses ends every manager process; Env.Stop calls it.
func (e *Env) stopProcesses() error {
	e.procMu.Lock()
	procs := e.processes
	e.processes = nil
	e.procMu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(p.Stop)
	}
	wg.Wait()
	if e.managerBuildDir != "" {
		return os.RemoveAll(e.managerBuildDir)
	}
	return nil
}

// prepareProcesses builds the manager and sets up its identity, once.
func (e *Env) prepareProcesses(ctx context.Context) error {
	e.prepareOnce.Do(func() {
		e.prepareErr = e.buildManager(ctx)
		if e.prepareErr == nil {
			e.prepareErr = e.installManagerIdentity(ctx)
		}
	})
	return e.prepareErr
}

// buildManager builds ./cmd/manager as `make build` does.
func (e *Env) buildManager(ctx context.Context) error {
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	if e.managerBuildDir, err = os.MkdirTemp("", "s3gw-remediation-manager-"); err != nil {
		return err
	}
	e.managerBinary = filepath.Join(e.managerBuildDir, "manager")
	began := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", e.managerBinary, "./cmd/manager")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building cmd/manager: %w\n%s", err, out)
	}
	e.log.Info("Built the manager", "binary", e.managerBinary, "took", time.Since(began).Round(time.Millisecond))
	return nil
}
