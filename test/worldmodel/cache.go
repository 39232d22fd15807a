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

package worldmodel

import (
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// informerCache is the manager process's cache: a copy of the API
// server's objects, listed when the process starts, that sees each later
// write only when its watch event arrives, up to the scenario's CacheLag
// after the write, in order per kind. The controller's cached client reads
// it; its APIReader reads the API server. Watch events wake the controller
// when they reach the cache, not when the write happens.
type informerCache struct {
	store   *store
	lag     time.Duration
	rnd     *rand.Rand
	pending []cachedChange
	// last is when each kind's latest event arrives: events of a kind
	// arrive in order.
	last map[schema.GroupVersionKind]time.Time
	// applied counts the events that arrived, for the workqueue's idea of
	// a changed world.
	applied int
}

// cachedChange is a write on its way to the cache: the object as written
// (nil when deleted), and when it arrives.
type cachedChange struct {
	at  time.Time
	c   change
	obj client.Object
}

// newInformerCache lists every object of the API server now.
func newInformerCache(api *store, lag time.Duration, rnd *rand.Rand) *informerCache {
	cs := newStore(api.scheme, api.now, api.suffix)
	for gvk, k := range api.kinds {
		cs.install(gvk, k.info)
		for key, obj := range k.objs {
			cs.kinds[gvk].objs[key] = obj.DeepCopyObject().(client.Object)
		}
	}
	return &informerCache{store: cs, lag: lag, rnd: rnd, last: map[schema.GroupVersionKind]time.Time{}}
}

// observe queues a committed write; obj is copied as it is now, since the
// model's components go on changing stored objects in place.
func (ic *informerCache) observe(now time.Time, c change, obj client.Object, deleted bool) {
	at := now.Add(time.Duration(ic.rnd.Int64N(int64(ic.lag) + 1)))
	if last := ic.last[c.gvk]; at.Before(last) {
		at = last
	}
	ic.last[c.gvk] = at
	cc := cachedChange{at: at, c: c}
	if !deleted {
		cc.obj = obj.DeepCopyObject().(client.Object)
	}
	ic.pending = append(ic.pending, cc)
}

// advance applies the events that arrived by now and returns them.
func (ic *informerCache) advance(now time.Time) []change {
	var arrived []change
	kept := ic.pending[:0]
	for _, cc := range ic.pending {
		if cc.at.After(now) {
			kept = append(kept, cc)
			continue
		}
		k := ic.store.kinds[cc.c.gvk]
		key := objKey{cc.c.namespace, cc.c.name}
		if cc.obj == nil {
			delete(k.objs, key)
		} else {
			k.objs[key] = cc.obj
		}
		k.sorted = nil
		ic.applied++
		arrived = append(arrived, cc.c)
	}
	ic.pending = kept
	return arrived
}

// next is when the next event arrives.
func (ic *informerCache) next() (time.Time, bool) {
	var next time.Time
	for _, cc := range ic.pending {
		if next.IsZero() || cc.at.Before(next) {
			next = cc.at
		}
	}
	return next, !next.IsZero()
}
