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
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestInformerCacheTrailsTheAPIServer(t *testing.T) {
	now := epoch
	s := newStore(scheme, func() time.Time { return now }, func() string { return "x" })
	installKinds(s, false, false)
	s.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	ic := newInformerCache(s, 2*time.Second, rand.New(rand.NewPCG(1, 2)))
	s.watch = ic.observe
	c := newAPIClient(s)
	c.cache = ic.store
	ctx, key := context.Background(), client.ObjectKey{Name: "n1"}

	node := s.node("n1")
	node.Labels = map[string]string{"changed": "yes"}
	s.touch(node)
	cached, direct := &corev1.Node{}, &corev1.Node{}
	if err := c.Get(ctx, key, cached); err != nil || cached.Labels["changed"] != "" {
		t.Errorf("cached read right after the write: %v %v, want the old node", cached.Labels, err)
	}
	if err := (uncached{c}).Get(ctx, key, direct); err != nil || direct.Labels["changed"] != "yes" {
		t.Errorf("uncached read: %v %v, want the new node", direct.Labels, err)
	}
	cached.Labels = map[string]string{"mine": "x"}
	if err := c.Update(ctx, cached); err == nil {
		t.Error("an update from the stale cached node succeeded, want a conflict")
	}

	now = now.Add(2 * time.Second)
	if arrived := ic.advance(now); len(arrived) != 1 || arrived[0].name != "n1" {
		t.Errorf("events arrived: %v, want the node's", arrived)
	}
	if err := c.Get(ctx, key, cached); err != nil || cached.Labels["changed"] != "yes" {
		t.Errorf("cached read after the lag: %v %v, want the new node", cached.Labels, err)
	}
}
