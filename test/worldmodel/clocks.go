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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every machine keeps its own clock. w.now is true time; the control plane
// (kube-apiserver, kube-controller-manager, NHC) runs on it. Each node's
// clock (its kubelet, its longhorn-manager, its replicas' files), the
// controller's, FAR's and the admin's run ahead of it or behind by their
// skew: every timestamp a component writes, and every "now" it compares
// one with, comes from its own clock.

// ClockSpec is each machine's skew against the control plane.
type ClockSpec struct {
	Nodes      []time.Duration
	Controller time.Duration
	FAR        time.Duration
	Admin      time.Duration
}

// maxSkew is the largest skew drawn: minutes, as an unsynchronised clock
// drifts in days or after a bad NTP step.
const maxSkew = 5 * time.Minute

// generateClocks draws every skew: half the machines are synchronised,
// the others off by up to maxSkew either way.
func generateClocks(r *rand.Rand, nodes int) ClockSpec {
	skew := func() time.Duration {
		if chance(r, 0.5) {
			return 0
		}
		return between(r, -maxSkew, maxSkew).Round(time.Second)
	}
	c := ClockSpec{Nodes: make([]time.Duration, nodes)}
	for i := range c.Nodes {
		c.Nodes[i] = skew()
	}
	c.Controller, c.FAR, c.Admin = skew(), skew(), skew()
	return c
}

// synchronised is the spec with every clock on the control plane's.
func (c ClockSpec) synchronised() ClockSpec {
	return ClockSpec{Nodes: make([]time.Duration, len(c.Nodes))}
}

func (w *World) nodeClock(n *Node) time.Time { return w.now.Add(n.Skew) }
func (w *World) controllerClock() time.Time  { return w.now.Add(w.sc.Clocks.Controller) }
func (w *World) farClock() time.Time         { return w.now.Add(w.sc.Clocks.FAR) }
func (w *World) adminClock() time.Time       { return w.now.Add(w.sc.Clocks.Admin) }

// apiTime and apiMicroTime are t as the API server stores it: metav1.Time
// is serialised to the second (k8s.io/apimachinery pkg/apis/meta/v1,
// time.go Time.MarshalJSON: time.RFC3339), metav1.MicroTime to the
// microsecond (micro_time.go MicroTime.MarshalJSON: RFC3339Micro). The model keeps objects in memory, so every time it writes
// goes through these, and a value a controller reads back from its own
// status compares equal to the one it read from the API, as in a cluster.
func apiTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }

func apiMicroTime(t time.Time) metav1.MicroTime {
	return metav1.NewMicroTime(t.Truncate(time.Microsecond))
}
