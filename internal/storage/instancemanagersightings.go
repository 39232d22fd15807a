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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// InstanceManagerSightings times, on this controller's clock, since when
// each instance manager has been running as the manager's informer delivers
// it. A running instance manager's list of processes is only as fresh as
// its monitor's last poll: one that has just turned running (its node back,
// its pod Ready again) lists nothing until the monitor's first tick
// (longhorn-manager controller/instance_manager_controller.go syncMonitor,
// InstanceManagerMonitor.Run), so its empty list proves nothing yet. It
// lives as long as the process; a restart starts over, and every instance
// manager then counts as just turned running.
type InstanceManagerSightings struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	seen  map[types.UID]instanceManagerSighting
}

// instanceManagerSighting is the last version read of one instance manager
// and since when it has been running without a break (zero: it is not).
type instanceManagerSighting struct {
	resourceVersion string
	runningSince    time.Time
}

// NewInstanceManagerSightings returns an empty record on clk.
func NewInstanceManagerSightings(clk clock.PassiveClock) *InstanceManagerSightings {
	return &InstanceManagerSightings{clock: clk, seen: map[types.UID]instanceManagerSighting{}}
}

// Observe records a version of an instance manager as read now.
func (s *InstanceManagerSightings) Observe(im *longhorn.InstanceManager) {
	if s == nil || im == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := instanceManagerSighting{resourceVersion: im.ResourceVersion}
	if im.Status.CurrentState == longhorn.InstanceManagerRunning {
		next.runningSince = s.seen[im.UID].runningSince
		if next.runningSince.IsZero() {
			next.runningSince = s.clock.Now()
		}
	}
	s.seen[im.UID] = next
}

// RunningSince is since when im has been seen running, for exactly the
// version given; zero when this version was not seen (the informer has not
// delivered it yet) or is not running, or when s is nil.
func (s *InstanceManagerSightings) RunningSince(im *longhorn.InstanceManager) time.Time {
	if s == nil {
		return time.Time{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := s.seen[im.UID]
	if seen.resourceVersion != im.ResourceVersion {
		return time.Time{}
	}
	return seen.runningSince
}
