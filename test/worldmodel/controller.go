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
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/s3gw-tech/s3gw-remediation/controllers"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// This is the only file that knows how the operator is wired: the real
// RemediationReconciler on a client over the model, driven as
// controller-runtime would (watch events and RequeueAfter), crashing after
// a committed write at random and restarting with nothing in memory.

// manager is the operator process.
type manager struct {
	w *World
	// quitsAt, when set, is when the operator stops acting, for good:
	// installed, NHC still creating its CRs, nothing reconciling them. A
	// baseline an episode's losses are compared with (attribution.go)
	// quits at the start, or when the engine whose writes were lost
	// started.
	quitsAt *time.Time
	queue   workqueue
	// client and rec are nil while the process is down.
	client    *apiClient
	rec       *controllers.RemediationReconciler
	restartAt time.Time
	// cache is the process's informer cache when the scenario's cache
	// lags; nil: the cached client reads the API server as it is.
	cache *informerCache
	// leases times the Lease renewals that reach the process, on its
	// clock, as controllers.WatchLeases does from its informer.
	leases *storage.LeaseSightings
}

func newManager(w *World, quitsAt *time.Time) *manager {
	m := &manager{w: w, quitsAt: quitsAt, queue: newWorkqueue()}
	if !m.quit() {
		m.start()
	}
	return m
}

// quit reports whether the operator no longer acts.
func (m *manager) quit() bool { return m.quitsAt != nil && !m.w.now.Before(*m.quitsAt) }

// start runs a fresh process: its informers list every object, and its
// queue every remediation.
func (m *manager) start() {
	c := newAPIClient(m.w.api)
	c.before = m.w.interleave
	c.afterWrite = m.afterWrite
	m.w.api.watch, m.cache = nil, nil
	if m.w.sc.CacheLag > 0 {
		m.cache = newInformerCache(m.w.api, m.w.sc.CacheLag, m.w.lagRand)
		m.w.api.watch, c.cache = m.cache.observe, m.cache.store
	}
	m.client = c
	m.leases = storage.NewLeaseSightings(worldClock{m.w})
	for _, lease := range m.view().list(gvkLease) {
		m.leases.Observe(lease.(*coordinationv1.Lease))
	}
	m.rec = &controllers.RemediationReconciler{
		Client: c, APIReader: uncached{c}, Recorder: recorder{m.w}, Clock: worldClock{m.w},
		Metrics: metrics.New(prometheus.NewRegistry()), Intervals: controllers.DefaultIntervals(),
		Leases: m.leases,
	}
	m.queue = newWorkqueue()
	for _, rem := range m.w.api.remediations() {
		m.queue.add(client.ObjectKeyFromObject(rem), m.w.now)
	}
}

// afterWrite audits a committed write, then maybe kills the process.
func (m *manager) afterWrite(verb string, old, obj client.Object) {
	m.w.audit(verb, old, obj)
	if m.w.rnd.Float64() < m.w.sc.CrashRate {
		m.client.dead = true
	}
}

// watch maps committed writes to requests as SetupWithManager's watches
// do: our CRs, the nodes they name, and VolumeAttachments by node. Pods,
// Longhorn's Nodes, Replicas and VolumeAttachments, and FAR CRs wake every
// remediation: the real mapping is narrower (by node, namespace or
// volume), and waking more only adds passes, which the model pays for in
// runtime, not in safety. InstanceManagers, which change with every
// replica start and stop, wake them too once the process has read one: a
// dynamic watch, as the operator starts for Longhorn's kinds.
func (m *manager) watch(changes []change) {
	for _, c := range changes {
		switch c.gvk {
		case gvkRemediation:
			m.queue.watch(types.NamespacedName{Namespace: c.namespace, Name: c.name}, m.w.now)
		case gvkNode:
			m.enqueueNode(c.name)
		case gvkKubeAttachment:
			m.enqueueNode(c.nodeName)
		case gvkPod, gvkLonghornNode, gvkLonghornReplica, gvkLonghornAttachment, gvkFAR:
			m.enqueueAll()
		case gvkLonghornInstanceManager:
			if m.client.read[gvkLonghornInstanceManager] {
				m.enqueueAll()
			}
		}
	}
}

func (m *manager) enqueueAll() {
	for _, rem := range m.w.api.remediations() {
		m.queue.watch(client.ObjectKeyFromObject(rem), m.w.now)
	}
}

func (m *manager) enqueueNode(node string) {
	for _, rem := range m.w.api.remediations() {
		if medik8s.NodeName(rem) == node {
			m.queue.watch(client.ObjectKeyFromObject(rem), m.w.now)
		}
	}
}

// dispatch delivers pending watch events and runs the due reconciles.
func (m *manager) dispatch() {
	if m.quit() {
		m.w.api.drain()
		return
	}
	changes := m.events()
	if m.client == nil {
		if m.w.now.Before(m.restartAt) {
			return
		}
		m.start()
		m.w.tracef("ctrl", "manager restarted")
	}
	m.watch(changes)
	m.queue.resume(m.w.now, m.version())
	for range maxReconcilesPerStep {
		key, ok := m.queue.pop(m.w.now, m.version())
		if !ok {
			return
		}
		m.reconcile(key)
		if m.client == nil {
			return
		}
		m.watch(m.events())
	}
}

// events are the watch events that reached the process: the writes since
// the last call, or those that arrived in its lagging cache.
func (m *manager) events() []change {
	changes := m.w.api.drain()
	if m.cache != nil {
		changes = m.cache.advance(m.w.now)
	}
	if m.client != nil {
		m.timeLeases(changes)
	}
	return changes
}

// view is what the process's cached client reads.
func (m *manager) view() *store {
	if m.cache != nil {
		return m.cache.store
	}
	return m.w.api
}

// timeLeases hands the Lease events that reached the process to its
// LeaseSightings, as the informer's handler does.
func (m *manager) timeLeases(changes []change) {
	for _, c := range changes {
		if c.gvk != gvkLease {
			continue
		}
		if lease, ok := m.view().get(gvkLease, c.namespace, c.name).(*coordinationv1.Lease); ok {
			m.leases.Observe(lease)
		} else {
			m.leases.Forget(c.name)
		}
	}
}

// version is the world as the process sees it, for the workqueue.
func (m *manager) version() version {
	v := m.w.version()
	if m.cache != nil {
		v.cached = m.cache.applied
	}
	return v
}

const maxReconcilesPerStep = 20

func (m *manager) reconcile(key types.NamespacedName) {
	m.w.reconciles++
	ctx := logf.IntoContext(context.Background(), m.w.logger())
	res, err := m.rec.Reconcile(ctx, reconcile.Request{NamespacedName: key})
	if m.client.dead {
		m.client, m.rec, m.cache, m.w.api.watch = nil, nil, nil, nil
		m.restartAt = m.w.now.Add(between(m.w.rnd, 2*time.Second, 30*time.Second))
		m.w.tracef("ctrl", "manager crashed; restarts at +%.1fs", m.restartAt.Sub(m.w.start).Seconds())
		return
	}
	if err != nil {
		m.w.tracef("ctrl", "reconcile %s: error %v", key.Name, err)
	}
	m.queue.done(key, res, err, m.w.now, m.version())
}

// next is when the manager next has something to do.
func (m *manager) next() (time.Time, bool) {
	if m.quit() {
		return time.Time{}, false
	}
	if m.client == nil {
		return m.restartAt, true
	}
	next, ok := m.queue.next()
	if m.cache != nil {
		if at, pending := m.cache.next(); pending && (!ok || at.Before(next)) {
			next, ok = at, true
		}
	}
	return next, ok
}

// worldClock is the reconciler's clock: the controller machine's.
type worldClock struct{ w *World }

func (c worldClock) Now() time.Time                  { return c.w.controllerClock() }
func (c worldClock) Since(t time.Time) time.Duration { return c.w.controllerClock().Sub(t) }

// recorder puts the controller's events into the trace.
type recorder struct{ w *World }

func (r recorder) Event(obj runtime.Object, eventtype, reason, message string) {
	if r.w.trace != nil {
		r.w.tracef("event", "%s %s: %s", eventtype, reason, message)
	}
}

func (r recorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	if r.w.trace != nil {
		r.Event(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
	}
}

func (r recorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.Eventf(obj, eventtype, reason, messageFmt, args...)
}
