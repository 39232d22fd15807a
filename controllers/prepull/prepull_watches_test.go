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

package prepull

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestWakeBatchesABurst checks that the events of a burst, from any of the
// watched kinds, become one pass, run a batch after the first of them.
func TestWakeBatchesABurst(t *testing.T) {
	g := NewWithT(t)
	clk := testingclock.NewFakeClock(t0.Time)
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clk})
	defer q.ShutDown()
	ctx := context.Background()
	pods, daemonSets := wake[client.Object](time.Second), wake[*appsv1.DaemonSet](time.Second)

	pods.Create(ctx, event.TypedCreateEvent[client.Object]{Object: gatewayPod.DeepCopy()}, q)
	clk.Step(300 * time.Millisecond)
	pods.Update(ctx, event.TypedUpdateEvent[client.Object]{ObjectOld: gatewayPod, ObjectNew: gatewayPod.DeepCopy()}, q)
	daemonSets.Delete(ctx, event.TypedDeleteEvent[*appsv1.DaemonSet]{Object: &appsv1.DaemonSet{}}, q)
	clk.Step(699 * time.Millisecond)
	g.Consistently(q.Len, 50*time.Millisecond).Should(BeZero(), "no pass before a batch has passed since the first event")

	clk.Step(time.Millisecond)
	g.Eventually(q.Len).Should(Equal(1), "one pass for the burst")
	req, _ := q.Get()
	g.Expect(req).To(Equal(Request))
	q.Done(req)
	clk.Step(time.Second)
	g.Consistently(q.Len, 50*time.Millisecond).Should(BeZero(), "no second pass for the same burst")
}
