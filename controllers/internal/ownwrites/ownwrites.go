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

// Package ownwrites remembers what this process wrote that its cache may
// not show yet. At a thousand nodes a watch event arrives half a second
// after the write, while other events wake the reconciler meanwhile:
//   - an object's resourceVersion as last written or read from the API: a
//     cached copy with another version is most likely older, and a step
//     decided on it would only lose the optimistic lock on its status
//     write, or, once the object is deleted, act after its cleanup. Such a
//     copy is read again from the API. Versions are compared for equality.
//   - the pods force-deleted for it: they are read from the API until the
//     cache shows them gone, so no step sees a released target's pod back.
//
// An entry goes only when the cache no longer holds the object: before, an
// older cached copy could still come back. A restarted process starts
// empty, its cache freshly listed.
package ownwrites

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Writes is what one process wrote, by object. The zero value is ready.
type Writes struct {
	mu    sync.Mutex
	byKey map[types.NamespacedName]*writes
}

type writes struct {
	version     string
	deletedPods sets.Set[types.UID]
}

// entry returns the object's entry, created if create; the caller holds mu.
func (w *Writes) entry(key types.NamespacedName, create bool) *writes {
	e := w.byKey[key]
	if e == nil && create {
		if w.byKey == nil {
			w.byKey = map[types.NamespacedName]*writes{}
		}
		e = &writes{deletedPods: sets.New[types.UID]()}
		w.byKey[key] = e
	}
	return e
}

// Saw records the object's version as written or read from the API.
func (w *Writes) Saw(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.entry(client.ObjectKeyFromObject(obj), true).version = obj.GetResourceVersion()
}

// Current reports whether a cached copy is the version last seen, or none
// was seen.
func (w *Writes) Current(obj client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.entry(client.ObjectKeyFromObject(obj), false)
	return e == nil || e.version == "" || e.version == obj.GetResourceVersion()
}

// Forget drops the object's entry once the cache no longer holds it.
func (w *Writes) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byKey, key)
}

// Deleted records a pod force-deleted for the object.
func (w *Writes) Deleted(key types.NamespacedName, pod types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.entry(key, true).deletedPods.Insert(pod)
}

// IsDeleted reports whether the pod was force-deleted for the object and the
// cache has not shown it gone since.
func (w *Writes) IsDeleted(key types.NamespacedName, pod types.UID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.entry(key, false)
	return e != nil && e.deletedPods.Has(pod)
}

// GoneFromCache forgets a force-deleted pod the cache shows gone.
func (w *Writes) GoneFromCache(key types.NamespacedName, pod types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.entry(key, false); e != nil {
		e.deletedPods.Delete(pod)
	}
}
