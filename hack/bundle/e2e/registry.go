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
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/api"
	"github.com/operator-framework/operator-registry/pkg/cache"
	"github.com/operator-framework/operator-registry/pkg/server"
	"google.golang.org/grpc"
	health "google.golang.org/grpc/health/grpc_health_v1"
)

// Registry serves a file-based catalog over gRPC, as `opm serve` does in a
// catalog image's pod, from this process: a CatalogSource with
// spec.address points OLM's catalog operator at it.
type Registry struct {
	// Address is host:port.
	Address string

	server *grpc.Server
	store  cache.Cache
}

// ServeCatalog writes cfg under dir and serves it on a free loopback port.
//
// Bundles without an image are served with their objects (the catalog's
// olm.bundle.object properties), so the catalog operator puts them into
// the InstallPlan itself instead of unpacking an image with a Job, which
// the local cluster could not run.
func ServeCatalog(ctx context.Context, cfg declcfg.DeclarativeConfig, dir string) (*Registry, error) {
	configs := filepath.Join(dir, "configs")
	if err := os.MkdirAll(configs, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(configs, "catalog.yaml"))
	if err != nil {
		return nil, err
	}
	if err := declcfg.WriteYAML(cfg, f); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	store, err := cache.New(filepath.Join(dir, "cache"))
	if err != nil {
		return nil, err
	}
	if err := cache.LoadOrRebuild(ctx, store, os.DirFS(configs)); err != nil {
		_ = store.Close()
		return nil, fmt.Errorf("loading the catalog: %w", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	r := &Registry{Address: lis.Addr().String(), server: grpc.NewServer(), store: store}
	api.RegisterRegistryServer(r.server, server.NewRegistryServer(store))
	health.RegisterHealthServer(r.server, server.NewHealthServer())
	go func() { _ = r.server.Serve(lis) }()
	return r, nil
}

// Stop stops serving.
func (r *Registry) Stop() error {
	r.server.Stop()
	return r.store.Close()
}
