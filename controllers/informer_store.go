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

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// InformerStore returns the store of the cache's informer of obj's kind,
// for the reads that go over every cached object in place instead of
// listing a copy of each (the nodes of the protection report's warmth, the
// pods workloads.Replacement scans). What it holds is the cache's own:
// read, never written.
func InformerStore(ctx context.Context, c cache.Informers, obj client.Object) (toolscache.Indexer, error) {
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("getting the %T informer: %w", obj, err)
	}
	shared, ok := informer.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the %T informer (%T) has no store to read", obj, informer)
	}
	return shared.GetIndexer(), nil
}
