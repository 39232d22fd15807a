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

// Command bench measures s3gw-remediation on the local cluster
// (docs/benchmark.md). Three benchmarks, one per first argument:
//
//	go run ./hack/bench [failover] [-n 20] [-nhc-duration 2s] [-modes ...]    # make bench-failover
//	go run ./hack/bench scale [-nodes 1000] [-gateways 100] [-fail 20]        # make bench-scale
//	go run ./hack/bench requests [-runs 3]                                     # make bench-requests
//
// failover compares s3gw's recovery time after a node failure per mode,
// with Kubernetes' default timings; scale fails many nodes of a large
// cluster at once and measures the operator's latency, memory, CPU and API
// requests; requests counts the API requests of one remediation. Results go
// to bench/results/<date>-<benchmark>/ (failover, scale-<nodes>, requests),
// with the version and commit measured.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
	"github.com/s3gw-tech/s3gw-remediation/version"
)

func main() {
	args := os.Args[1:]
	benchmark := failoverMain
	if len(args) > 0 {
		switch args[0] {
		case "failover":
			args = args[1:]
		case "scale":
			benchmark, args = scaleMain, args[1:]
		case "requests":
			benchmark, args = requestsMain, args[1:]
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := benchmark(ctx, args); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

// stopEnv stops the cluster and everything the harness started.
func stopEnv(env *harness.Env) {
	fmt.Println("Stopping the cluster ...")
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping:", err)
	}
}

// machineDescription names the machine and how much of it other work took
// since load started; call it once the cluster is stopped.
func machineDescription(load *machineLoad) string {
	return fmt.Sprintf("%s/%s, %d CPUs; %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), load.describe(runtime.NumCPU()))
}

// commandLine joins arguments as a shell would need them, for results.md.
func commandLine(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = a
		if a == "" || strings.ContainsAny(a, " '\"#;&|()<>$`\\") {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}

// measuredCode is what a result records of the code it measured.
type measuredCode struct {
	// Version is the operator version the make targets stamp into
	// version.Version ("dev" when run without make).
	Version string `json:"version,omitempty"`
	// Commit is what git describes of the work tree, "-dirty" when it had
	// uncommitted changes.
	Commit string `json:"commit,omitempty"`
	// Code is the line results.md shows: version, commit and -note.
	Code string `json:"code,omitempty"`
}

// measureCode describes the code measured, with note.
func measureCode(note string) measuredCode {
	c := measuredCode{Version: version.Version, Commit: "unknown"}
	if root, err := cluster.RepoRoot(); err == nil {
		if out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty", "--abbrev=12").Output(); err == nil {
			c.Commit = strings.TrimSpace(string(out))
		}
	}
	c.Code = fmt.Sprintf("version %s, commit %s", c.Version, c.Commit)
	if note != "" {
		c.Code += "; " + note
	}
	return c
}

// resultDir is the directory a benchmark writes to: out, or
// bench/results/<date>-<name>, the name saying which benchmark.
func resultDir(out string, began time.Time, name string) (string, error) {
	if out != "" {
		return out, nil
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bench", "results", began.Format("2006-01-02")+"-"+name), nil
}

// writeResults writes a benchmark's result to dir: the report as
// results.md, v as indented JSON in jsonName, and the other files as given.
func writeResults(dir, jsonName string, v any, report string, other map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results: %w", err)
	}
	files := map[string]string{"results.md": report, jsonName: string(data) + "\n"}
	maps.Copy(files, other)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// parallel runs f for every item, at most n at a time, and returns the
// first error.
func parallel[T any](ctx context.Context, n int, items []T, f func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, n)
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, item := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return errors.Join(append(errs, ctx.Err())...)
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if errs[i] = f(ctx, item); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
