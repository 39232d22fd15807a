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
type workqueue struct {
	due      map[types.NamespacedName]time.Time
	failures map[types.NamespacedName]int
}

const (
	backoffBase = 5 * time.Millisecond
	backoffMax  = 1000 * time.Second
)

func newWorkqueue() workqueue {
	return workqueue{due: map[types.NamespacedName]time.Time{}, failures: map[types.NamespacedName]int{}}
}

func (q workqueue) add(key types.NamespacedName, at time.Time) {
	if cur, ok := q.due[key]; !ok || at.Before(cur) {
		q.due[key] = at
	}
}

// pop takes the earliest due key (ties by name, for determinism).
func (q workqueue) pop(now time.Time) (types.NamespacedName, bool) {
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
	}
	return best, found
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

func (q workqueue) done(key types.NamespacedName, res reconcile.Result, err error, now time.Time) {
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
