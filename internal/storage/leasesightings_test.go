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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// TestLeaseSightings: renewals are timed when the informer delivers them,
// on the controller's clock, whatever renewTime says.
func TestLeaseSightings(t *testing.T) {
	g := NewWithT(t)
	t0 := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	s := NewLeaseSightings(clk)
	h := s.Handler()
	nodeClock := t0.Add(-time.Hour) // the node's clock, an hour behind
	lease := func(namespace string, renewed time.Time) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: namespace},
			Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renewed}, LeaseDurationSeconds: ptr.To[int32](40)}}
	}

	h.OnAdd(lease(corev1.NamespaceNodeLease, nodeClock), true)
	first := s.Of("n1")
	g.Expect(first.At).To(Equal(t0))
	g.Expect(first.Witnessed).To(BeFalse(), "the first reading is no renewal")

	clk.SetTime(t0.Add(10 * time.Second))
	h.OnUpdate(nil, lease(corev1.NamespaceNodeLease, nodeClock))
	g.Expect(s.Of("n1")).To(Equal(first), "an update that renews nothing is no sighting")

	clk.SetTime(t0.Add(15 * time.Second))
	h.OnUpdate(nil, lease(corev1.NamespaceNodeLease, nodeClock.Add(10*time.Second)))
	renewal := s.Of("n1")
	g.Expect(renewal.At).To(Equal(t0.Add(15 * time.Second)))
	g.Expect(renewal.Witnessed).To(BeTrue())

	hb := Heartbeat(nil, lease(corev1.NamespaceNodeLease, nodeClock.Add(10*time.Second)))
	hb.Seen = renewal
	g.Expect(hb.Lagging(t0.Add(30*time.Second))).To(BeFalse(), "renewed 15 s ago on the controller's clock")
	g.Expect(hb.Lagging(t0.Add(36*time.Second))).To(BeTrue(), "not renewed for 21 s on the controller's clock")

	h.OnUpdate(nil, lease("default", nodeClock.Add(time.Hour)))
	g.Expect(s.Of("n1")).To(Equal(renewal), "a Lease outside kube-node-lease is not a kubelet's")

	h.OnDelete(toolscache.DeletedFinalStateUnknown{Obj: lease(corev1.NamespaceNodeLease, nodeClock)})
	g.Expect(s.Of("n1").At.IsZero()).To(BeTrue(), "a deleted Lease is forgotten")

	var none *LeaseSightings
	g.Expect(none.Of("n1").At.IsZero()).To(BeTrue())
}
