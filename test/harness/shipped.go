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
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// ShippedNodeHealthCheckFile is the one source of the NodeHealthCheck the
// project ships: the chart creates it, dist/ and config/samples carry it.
const ShippedNodeHealthCheckFile = "config/nodehealthcheck/nodehealthcheck.yaml"

// ShippedUnhealthyDuration is the shipped NodeHealthCheck's Ready=Unknown
// duration (docs/configuration.md#choosing-the-unhealthy-duration): a node
// the node-lifecycle controller marks Unknown is remediated this long
// after. The demo prints it; a test holds it equal to the file.
const ShippedUnhealthyDuration = 2 * time.Second

// ShippedNodeHealthCheck reads the shipped NodeHealthCheck.
func ShippedNodeHealthCheck() (nhc.Definition, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return nhc.Definition{}, err
	}
	data, err := os.ReadFile(filepath.Join(root, ShippedNodeHealthCheckFile))
	if err != nil {
		return nhc.Definition{}, err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return nhc.Definition{}, fmt.Errorf("%s: %w", ShippedNodeHealthCheckFile, err)
	}
	return nhc.ReadDefinition(obj)
}

// shipped applies the shipped NodeHealthCheck to em, for
// Options.ShippedNodeHealthCheck: its unhealthy conditions (Ready=Unknown's
// duration replaced by unknown, if set) and its selector, narrowed to the
// nodes labelled pool.
func shipped(em *nhc.Emulator, pool map[string]string, unknown time.Duration) error {
	def, err := ShippedNodeHealthCheck()
	if err != nil {
		return err
	}
	em.UnhealthyConditions = append(em.UnhealthyConditions[:0], def.UnhealthyConditions...)
	for i, c := range em.UnhealthyConditions {
		if unknown > 0 && c.Type == "Ready" && c.Status == "Unknown" {
			em.UnhealthyConditions[i].Duration = unknown
		}
	}
	em.Selector = *def.Selector.DeepCopy()
	if len(pool) > 0 {
		if em.Selector.MatchLabels == nil {
			em.Selector.MatchLabels = map[string]string{}
		}
		maps.Copy(em.Selector.MatchLabels, pool)
	}
	return nil
}

// WatchNodeHealthCheck emulates the NodeHealthCheck name that an install
// created (the chart's), as NHC would run it: its selector, minHealthy,
// unhealthy conditions and template, read from the object.
func (e *Env) WatchNodeHealthCheck(ctx context.Context, name string) (*nhc.Emulator, error) {
	obj := nhc.NodeHealthCheckObject()
	if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		return nil, fmt.Errorf("getting NodeHealthCheck %s: %w", name, err)
	}
	def, err := nhc.ReadDefinition(obj)
	if err != nil {
		return nil, err
	}
	if e.opts.ExternalNHC {
		return nil, fmt.Errorf("NodeHealthCheck %s: NHC is external here", name)
	}
	nhcClient, err := e.nhcClient()
	if err != nil {
		return nil, err
	}
	em := &nhc.Emulator{Client: nhcClient, Clock: clock.RealClock{}}
	def.Apply(em)
	// Adopts the existing object: its UID owns the CRs.
	if err := em.CreateNodeHealthCheck(ctx, e.Client); err != nil {
		return nil, err
	}
	if err := e.nhc.add(name, em); err != nil {
		return nil, err
	}
	return em, nil
}
