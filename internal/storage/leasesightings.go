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

package storage

import (
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// LeaseSightings times, on this controller's clock, each kubelet Lease
// renewal as the manager's informer delivers it: whether a replica's node
// still renews is then read without the node's clock, which may be minutes
// off. kube-controller-manager does the same (pkg/controller/nodelifecycle,
// tryUpdateNodeHealth: probeTimestamp is its own now when renewTime
// changed). It lives as long as the process; a restart starts over with a
// first reading, which Heartbeat.Lagging does not take as a renewal.
type LeaseSightings struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	seen  map[string]failover.HeartbeatSighting
}

// NewLeaseSightings returns an empty record on clk.
func NewLeaseSightings(clk clock.PassiveClock) *LeaseSightings {
	return &LeaseSightings{clock: clk, seen: map[string]failover.HeartbeatSighting{}}
}

// Observe records a node Lease as read now. Leases outside
// kube-node-lease are not a kubelet's and are ignored.
func (s *LeaseSightings) Observe(lease *coordinationv1.Lease) {
	if lease == nil || lease.Namespace != corev1.NamespaceNodeLease {
		return
	}
	hb := Heartbeat(nil, lease)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[lease.Name] = s.seen[lease.Name].Next(hb, s.clock.Now())
}

// Forget drops a deleted Lease's record: a Lease created again under the
// name belongs to a kubelet that starts over.
func (s *LeaseSightings) Forget(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, node)
}

// Of is what was seen of node's Lease; zero when nothing was, or when s is
// nil (a reconciler without a manager, as in step-by-step tests).
func (s *LeaseSightings) Of(node string) failover.HeartbeatSighting {
	if s == nil {
		return failover.HeartbeatSighting{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[node]
}

// Handler feeds s from a Lease informer.
func (s *LeaseSightings) Handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			lease, _ := obj.(*coordinationv1.Lease)
			s.Observe(lease)
		},
		UpdateFunc: func(_, obj any) {
			lease, _ := obj.(*coordinationv1.Lease)
			s.Observe(lease)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if lease, ok := obj.(*coordinationv1.Lease); ok && lease.Namespace == corev1.NamespaceNodeLease {
				s.Forget(lease.Name)
			}
		},
	}
}
