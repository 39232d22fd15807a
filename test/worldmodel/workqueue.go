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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// workqueue is controller-runtime's queue on model time: one entry per
// key at its earliest due time, RequeueAfter as given, and errors retried
// with per-key exponential backoff (5 ms doubling up to 1000 s).
//
// One liberty: a requeued pass that would see exactly the world of the
// key's previous pass (no API write, no world step since) waits for the
// next world step. Its inputs differ only by the clock, so this models a
// manager that runs late by at most one base period, and saves the many
// identical polls of a long wait.
type workqueue struct {
	due      map[types.NamespacedName]time.Time
	failures map[types.NamespacedName]int
	// watched keys were added by a watch event: they always run.
	watched map[types.NamespacedName]bool
	// seen is the world version each key's last pass ended at.
	seen map[types.NamespacedName]version
	// deferred keys wait for the world to change.
	deferred map[types.NamespacedName]bool
}

// version identifies a state of the world: API writes and world steps,
// and the watch events that reached a lagging cache.
type version struct {
	rv     int64
	steps  int
	cached int
}

const (
	backoffBase = 5 * time.Millisecond
	backoffMax  = 1000 * time.Second
)

func newWorkqueue() workqueue {
	return workqueue{due: map[types.NamespacedName]time.Time{}, failures: map[types.NamespacedName]int{},
		watched: map[types.NamespacedName]bool{}, seen: map[types.NamespacedName]version{},
		deferred: map[types.NamespacedName]bool{}}
}

func (q workqueue) add(key types.NamespacedName, at time.Time) {
	delete(q.deferred, key)
	if cur, ok := q.due[key]; !ok || at.Before(cur) {
		q.due[key] = at
	}
}

// watch adds a key for a watch event, due now.
func (q workqueue) watch(key types.NamespacedName, now time.Time) {
	q.add(key, now)
	q.watched[key] = true
}

// pop takes the earliest due key (ties by name, for determinism); idle
// polls of an unchanged world are deferred instead.
func (q workqueue) pop(now time.Time, world version) (types.NamespacedName, bool) {
	for key, at := range q.due {
		if !at.After(now) && !q.watched[key] && q.seen[key] == world {
			delete(q.due, key)
			q.deferred[key] = true
		}
	}
	var best types.NamespacedName
	found := false
	for key, at := range q.due {
		if at.After(now) {
			continue
		}
		if !found || at.Before(q.due[best]) || (at.Equal(q.due[best]) && key.String() < best.String()) {
			best, found = key, true
		}
	}
	if found {
		delete(q.due, best)
		delete(q.watched, best)
	}
	return best, found
}

// resume makes deferred keys due once the world changed.
func (q workqueue) resume(now time.Time, world version) {
	for key := range q.deferred {
		if q.seen[key] != world {
			delete(q.deferred, key)
			q.add(key, now)
		}
	}
}

func (q workqueue) next() (time.Time, bool) {
	var next time.Time
	found := false
	for _, at := range q.due {
		if !found || at.Before(next) {
			next, found = at, true
		}
	}
	return next, found
}

func (q workqueue) done(key types.NamespacedName, res reconcile.Result, err error, now time.Time, world version) {
	q.seen[key] = world
	if err != nil || res.Requeue { //nolint:staticcheck // controller-runtime still honours Requeue
		q.failures[key]++
		backoff := backoffBase << min(q.failures[key]-1, 30)
		q.add(key, now.Add(min(backoff, backoffMax)))
		return
	}
	delete(q.failures, key)
	if res.RequeueAfter > 0 {
		q.add(key, now.Add(res.RequeueAfter))
	}
}
