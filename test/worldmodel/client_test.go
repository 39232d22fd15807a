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
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// The controller's client must behave like an API server, or the world
// model proves nothing: these pin the semantics the controller relies on.

func newTestClient(t *testing.T) (*apiClient, *store) {
	t.Helper()
	now := epoch
	s := newStore(scheme, func() time.Time { return now }, func() string { return "abcde" })
	installKinds(s, false, false)
	return newAPIClient(s), s
}

func boundPod(name, node string, finalizers ...string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Finalizers: finalizers},
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To(int64(30))}}
}

func TestClientLocksOnResourceVersion(t *testing.T) {
	c, s := newTestClient(t)
	ctx := context.Background()
	s.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	stale := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: "n1"}, stale); err != nil {
		t.Fatal(err)
	}
	s.touch(s.node("n1")) // someone else writes
	patch := client.MergeFromWithOptions(stale.DeepCopy(), client.MergeFromWithOptimisticLock{})
	stale.Spec.Taints = append(stale.Spec.Taints, outOfServiceTaint())
	if err := c.Patch(ctx, stale, patch); !apierrors.IsConflict(err) {
		t.Fatalf("patch on a stale resourceVersion: got %v, want Conflict", err)
	}
	if len(s.node("n1").Spec.Taints) != 0 {
		t.Fatal("a conflicting patch changed the node")
	}
}

func TestClientStatusSubresourceWritesOnlyStatus(t *testing.T) {
	c, s := newTestClient(t)
	ctx := context.Background()
	s.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{VolumesInUse: []corev1.UniqueVolumeName{"v"}}})
	n := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: "n1"}, n); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Status.VolumesInUse, n.Spec.Unschedulable = nil, true
	if err := c.Status().Patch(ctx, n, patch); err != nil {
		t.Fatal(err)
	}
	if got := s.node("n1"); len(got.Status.VolumesInUse) != 0 || got.Spec.Unschedulable {
		t.Fatalf("status patch: volumesInUse %v, unschedulable %v; want status changed only", got.Status.VolumesInUse, got.Spec.Unschedulable)
	}
}

func TestClientForceDeleteHonoursUIDAndFinalizers(t *testing.T) {
	c, s := newTestClient(t)
	ctx := context.Background()
	s.create(boundPod("held", "n1", foreignFinalizer))
	s.create(boundPod("free", "n1"))
	wrong := types.UID("other")
	err := c.Delete(ctx, boundPod("free", "n1"), client.GracePeriodSeconds(0), client.Preconditions{UID: &wrong})
	if !apierrors.IsConflict(err) {
		t.Fatalf("delete with a wrong UID precondition: got %v, want Conflict", err)
	}
	for _, name := range []string{"held", "free"} {
		if err := c.Delete(ctx, boundPod(name, "n1"), client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	if s.get(gvkPod, "ns", "free") != nil {
		t.Error("a force-deleted pod without finalizers is still there")
	}
	held, _ := s.get(gvkPod, "ns", "held").(*corev1.Pod)
	if held == nil || held.DeletionTimestamp == nil || *held.DeletionGracePeriodSeconds != 0 {
		t.Errorf("a force-deleted pod with a finalizer must stay, deleted with grace 0: %+v", held)
	}
}

func TestClientGracefulPodDeleteWaitsForTheKubelet(t *testing.T) {
	c, s := newTestClient(t)
	s.create(boundPod("p", "n1"))
	if err := c.Delete(context.Background(), boundPod("p", "n1")); err != nil {
		t.Fatal(err)
	}
	p, _ := s.get(gvkPod, "ns", "p").(*corev1.Pod)
	if p == nil || p.DeletionTimestamp == nil || !p.DeletionTimestamp.Equal(&metav1.Time{Time: epoch.Add(30 * time.Second)}) {
		t.Fatalf("a bound pod deleted gracefully must stay terminating for its grace period: %+v", p)
	}
}

func TestClientSelectorsAndNoMatch(t *testing.T) {
	c, s := newTestClient(t)
	ctx := context.Background()
	s.create(boundPod("a", "n1"))
	s.create(boundPod("b", "n2"))
	pods := &corev1.PodList{}
	err := c.List(ctx, pods, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("spec.nodeName", "n2")})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "b" {
		t.Fatalf("spec.nodeName selector: %v %v", err, pods.Items)
	}
	far := &unstructured.UnstructuredList{}
	far.SetGroupVersionKind(farGroupVersion.WithKind("FenceAgentsRemediationList"))
	if err := c.List(ctx, far); !meta.IsNoMatchError(err) {
		t.Fatalf("listing an uninstalled kind: got %v, want NoMatch", err)
	}
}

func TestClientDefaultsCreatedRemediations(t *testing.T) {
	c, _ := newTestClient(t)
	rem := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "n1"}}
	if err := c.Create(context.Background(), rem); err != nil {
		t.Fatal(err)
	}
	if rem.Spec.Fencing.Mode != s3gwv1alpha1.FencingModeRequireEvidence || rem.Spec.Release.Strategy != s3gwv1alpha1.ReleaseControllerDetach {
		t.Fatalf("CRD defaults not applied: %+v", rem.Spec)
	}
	if err := c.Create(context.Background(), rem.DeepCopy()); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: got %v, want AlreadyExists", err)
	}
}

func TestClientDeadProcessChangesNothing(t *testing.T) {
	c, s := newTestClient(t)
	s.create(boundPod("p", "n1"))
	c.dead = true
	if err := c.Delete(context.Background(), boundPod("p", "n1"), client.GracePeriodSeconds(0)); !errors.Is(err, errCrashed) {
		t.Fatalf("a dead process' delete: got %v", err)
	}
	if s.get(gvkPod, "ns", "p") == nil {
		t.Fatal("a dead process deleted a pod")
	}
}
