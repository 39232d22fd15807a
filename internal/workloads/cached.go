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

package workloads

import (
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CachedPods reads the pods the manager caches: through Reader like any
// reader, and in place from Store, the pod informer's own store, where a
// reader would copy every pod it returns. Replacement reads in place: it
// scans every gateway pod of a namespace on each remediation pass, and
// during a burst of failovers those copies were the largest part of the
// manager's live heap. What Store holds is the cache's: read, never
// written.
type CachedPods struct {
	client.Reader
	// Store is the pod informer's indexer (namespace-indexed, as every
	// controller-runtime informer is); nil reads through Reader only.
	Store toolscache.Indexer
}
