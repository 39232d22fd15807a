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

// Package testenv starts the envtest control plane (a real kube-apiserver and
// etcd built by `make envtest-assets`) with the project's CRDs and the test
// fixtures for Longhorn and medik8s installed. Only tests import it.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// New returns an environment with our CRDs and the fixture CRDs. It uses
// KUBEBUILDER_ASSETS if set, else bin/k8s; it fails rather than skips when
// the binaries are missing.
func New() (*envtest.Environment, error) {
	root := RepoRoot()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run 'make envtest-assets' (or 'make test', which builds it)", bin, assets)
		}
	}
	if err := s3gwv1alpha1.AddToScheme(scheme.Scheme); err != nil {
		return nil, err
	}
	if err := longhorn.AddToScheme(scheme.Scheme); err != nil {
		return nil, err
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths: []string{
			filepath.Join(root, "config", "crd", "bases"),
			filepath.Join(root, "test", "crds", "longhorn"),
			filepath.Join(root, "test", "crds", "medik8s"),
		},
		ErrorIfCRDPathMissing:    true,
		Scheme:                   scheme.Scheme,
		AttachControlPlaneOutput: os.Getenv("ENVTEST_VERBOSE") != "",
	}, nil
}

// Started is a running test control plane with an admin client.
type Started struct {
	Env    *envtest.Environment
	Config *rest.Config
	Client client.Client
}

// Start starts the environment New returns and connects an admin client.
func Start() (*Started, error) {
	env, err := New()
	if err != nil {
		return nil, err
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Started{Env: env, Config: cfg, Client: c}, nil
}
