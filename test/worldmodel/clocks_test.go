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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// TestNodeLifecycleIgnoresTheKubeletsClock: kube-controller-manager marks a
// node Unknown 50 s after it last saw its heartbeat change, whatever time
// the kubelet's clock wrote; the kubelet's own timestamps carry its skew.
func TestNodeLifecycleIgnoresTheKubeletsClock(t *testing.T) {
	for _, skew := range []time.Duration{-5 * time.Minute, 0, 5 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			sc := &Scenario{Nodes: 1, Clocks: ClockSpec{Nodes: []time.Duration{skew}}, Duration: 10 * time.Minute}
			w := newWorld(sc, rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4)), nil)
			n := w.nodes[0]
			var unknownAt time.Duration
			for at := time.Duration(0); at <= 3*time.Minute && unknownAt == 0; at += time.Second {
				w.now = epoch.Add(at)
				n.CP = at < time.Minute // the kubelet loses the API server at 60 s
				w.kubelets()
				w.nodeLifecycle()
				if readyCondition(w.api.node(n.Name)).Status == corev1.ConditionUnknown {
					unknownAt = at
				}
			}
			if unknownAt != 105*time.Second {
				t.Errorf("Unknown at %s, want at the first 5 s period more than 50 s after it saw the last renewal (50 s)", unknownAt)
			}
			if renew := w.api.lease(n.Name).Spec.RenewTime.Time; renew.Sub(epoch.Add(50*time.Second)) != skew {
				t.Errorf("last Lease renewal %s, want 50 s on the kubelet's clock (skew %s)", renew.Sub(epoch), skew)
			}
			if written := storage.LastWrite(w.api.lease(n.Name).ManagedFields); !written.Equal(epoch.Add(50 * time.Second)) {
				t.Errorf("kube-apiserver stamped the last Lease write at %s, want 50 s on the control plane's clock", written.Sub(epoch))
			}
		})
	}
}
