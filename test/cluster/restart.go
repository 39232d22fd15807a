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
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Component names for RestartComponents.
const (
	Etcd      = "etcd"
	APIServer = apiserverName
)

// component is one control-plane process and how to start it again.
type component struct {
	name, binary string
	args, env    []string
	ready        probe

	mu   sync.Mutex
	proc *Process // nil until started
}

func (comp *component) process() *Process {
	comp.mu.Lock()
	defer comp.mu.Unlock()
	return comp.proc
}

// launch starts the component and waits until its probe passes.
func (c *Cluster) launch(ctx context.Context, comp *component) error {
	proc, err := StartProcess(comp.name, comp.binary, comp.args, comp.env, filepath.Join(c.logDir, comp.name+".log"))
	if err != nil {
		return err
	}
	comp.mu.Lock()
	comp.proc = proc
	comp.mu.Unlock()
	return waitReady(ctx, proc, c.opts.StartTimeout, comp.ready)
}

// RestartComponents kills the named components (Etcd, APIServer, or any
// other component name) with SIGKILL, as a crash or an OOM kill would, all
// at once, keeps them down for downtime, then starts them again in start
// order with the same flags and data, and returns once each reports
// healthy. It returns how long the components were unavailable: from the
// kill until the last one was ready again.
func (c *Cluster) RestartComponents(ctx context.Context, downtime time.Duration, names ...string) (time.Duration, error) {
	var restart []*component
	for _, comp := range c.components {
		if slices.Contains(names, comp.name) {
			restart = append(restart, comp)
		}
	}
	if len(restart) != len(names) {
		return 0, fmt.Errorf("restarting %v: unknown component among them", names)
	}
	killed := time.Now()
	for i := len(restart) - 1; i >= 0; i-- { // dependents first
		restart[i].process().Kill()
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(downtime):
	}
	for _, comp := range restart {
		if err := c.launch(ctx, comp); err != nil {
			return 0, fmt.Errorf("restarting %s: %w", comp.name, err)
		}
	}
	return time.Since(killed), nil
}
