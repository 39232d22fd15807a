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
	"path/filepath"
)

// apiserverName names the API server binary, process and certificate.
const apiserverName = "kube-apiserver"

const modulePath = "github.com/s3gw-tech/s3gw-remediation"

// RepoRoot finds the repository root by walking up from the working
// directory to the go.mod of this module. Tests run in their package
// directory and tools in the root, so both find the same place.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getting working directory: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isModuleLine(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// isModuleLine reports whether a go.mod declares this module, wherever the
// module line sits (comments may precede it).
func isModuleLine(gomod []byte) bool {
	for line := range bytes.Lines(gomod) {
		if string(bytes.TrimSpace(line)) == "module "+modulePath {
			return true
		}
	}
	return false
}

// binaries are the executables a cluster runs.
type binaries struct {
	etcd, apiserver, controllerManager, scheduler, kubectl, kwok string
}

// findBinaries resolves every executable up front, so that a missing one
// fails Start before anything is launched, with a hint how to build it.
func findBinaries(o Options) (binaries, error) {
	binDir, kwok := o.BinDir, o.KwokBinary
	if binDir == "" || kwok == "" {
		root, err := RepoRoot()
		if err != nil {
			return binaries{}, fmt.Errorf("locating the cluster binaries: %w", err)
		}
		if binDir == "" {
			binDir = filepath.Join(root, "bin", "k8s")
		}
		if kwok == "" {
			kwok = filepath.Join(root, "bin", "kwok")
		}
	}
	b := binaries{
		etcd:              filepath.Join(binDir, "etcd"),
		apiserver:         filepath.Join(binDir, apiserverName),
		controllerManager: filepath.Join(binDir, "kube-controller-manager"),
		scheduler:         filepath.Join(binDir, "kube-scheduler"),
		kubectl:           filepath.Join(binDir, "kubectl"),
		kwok:              kwok,
	}
	var errs []error
	for _, path := range []string{b.etcd, b.apiserver, b.controllerManager, b.scheduler, b.kwok} {
		errs = append(errs, checkExecutable(path))
	}
	if err := errors.Join(errs...); err != nil {
		return binaries{}, fmt.Errorf("%w (build them with `make control-plane kwok`)", err)
	}
	return b, nil
}

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
