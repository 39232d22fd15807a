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

package remediation

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// ownWrites remembers, for each CR, what this process wrote that its cache
// may not show yet. At a thousand nodes a watch event arrives half a second
// after the write, while Longhorn, pod and attachment events wake passes
// meanwhile:
//   - the CR's resourceVersion as last written or read from the API: a
//     cached copy with another version is most likely older, and a pass
//     decided on it would only lose the optimistic lock on its status
//     patch, or, once the CR is deleted, act after its cleanup. Such a copy
//     is read again from the API. Versions are compared for equality only.
//   - the pods force-deleted for it: they are read from the API until the
//     cache shows them gone, so no pass sees a released target's pod back.
//
// An entry goes only when the cache no longer holds the CR: before, an
// older cached copy could still come back. A restarted process starts
// empty, its cache freshly listed. The zero value is ready.
type ownWrites struct {
	mu   sync.Mutex
	byCR map[types.NamespacedName]*crWrites
}

type crWrites struct {
	version     string
	deletedPods sets.Set[types.UID]
}

// entry returns the CR's entry, created if create; the caller holds mu.
func (o *ownWrites) entry(key types.NamespacedName, create bool) *crWrites {
	e := o.byCR[key]
	if e == nil && create {
		if o.byCR == nil {
			o.byCR = map[types.NamespacedName]*crWrites{}
		}
		e = &crWrites{deletedPods: sets.New[types.UID]()}
		o.byCR[key] = e
	}
	return e
}

// saw records the CR's version as written or read from the API.
func (o *ownWrites) saw(rem *s3gwv1alpha1.S3GWRemediation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.entry(client.ObjectKeyFromObject(rem), true).version = rem.ResourceVersion
}

// current reports whether a cached copy is the version last seen, or none
// was seen.
func (o *ownWrites) current(rem *s3gwv1alpha1.S3GWRemediation) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.entry(client.ObjectKeyFromObject(rem), false)
	return e == nil || e.version == "" || e.version == rem.ResourceVersion
}

// forget drops the CR's entry once the cache no longer holds the CR.
func (o *ownWrites) forget(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.byCR, key)
}

// deleted records a pod force-deleted for the CR.
func (o *ownWrites) deleted(key types.NamespacedName, pod types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.entry(key, true).deletedPods.Insert(pod)
}

// isDeleted reports whether the pod was force-deleted for the CR and the
// cache has not shown it gone since.
func (o *ownWrites) isDeleted(key types.NamespacedName, pod types.UID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.entry(key, false)
	return e != nil && e.deletedPods.Has(pod)
}

// goneFromCache forgets a force-deleted pod the cache shows gone.
func (o *ownWrites) goneFromCache(key types.NamespacedName, pod types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if e := o.entry(key, false); e != nil {
		e.deletedPods.Delete(pod)
	}
}

// getRemediation reads the CR from the cache, or from the API when the
// cached copy is not the version this process last wrote or read there.
// A CR the API no longer has keeps its entry until the cache sees it go.
func (r *Reconciler) getRemediation(ctx context.Context, key types.NamespacedName) (*s3gwv1alpha1.S3GWRemediation, error) {
	rem := &s3gwv1alpha1.S3GWRemediation{}
	if err := r.Client.Get(ctx, key, rem); err != nil {
		if apierrors.IsNotFound(err) {
			r.own.forget(key)
		}
		return nil, err
	}
	if !r.own.current(rem) {
		if err := r.APIReader.Get(ctx, key, rem); err != nil {
			return nil, err
		}
	}
	r.own.saw(rem)
	return rem, nil
}
