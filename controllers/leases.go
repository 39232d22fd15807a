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

package controllers

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// WatchLeases times every kubelet Lease renewal the manager's cache
// delivers, on clk, for the reconcilers' Leases field. Call it before the
// manager starts; the cache already holds the node Leases (CacheOptions).
func WatchLeases(ctx context.Context, c cache.Informers, clk clock.PassiveClock) (*storage.LeaseSightings, error) {
	informer, err := c.GetInformer(ctx, &coordinationv1.Lease{})
	if err != nil {
		return nil, fmt.Errorf("getting the node Lease informer: %w", err)
	}
	leases := storage.NewLeaseSightings(clk)
	if _, err := informer.AddEventHandler(leases.Handler()); err != nil {
		return nil, fmt.Errorf("timing node Lease renewals: %w", err)
	}
	return leases, nil
}
