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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// recreateWorld is replicaWorld with n1 hit by fault at 10 s, NHC on
// after 10 s Unknown, and the admin replacing n1 30 s after it went
// NotReady, gap later.
func recreateWorld(t *testing.T, fault Fault, gap time.Duration) *World {
	t.Helper()
	fault.At, fault.Nodes = 10*time.Second, []int{0}
	sc := &Scenario{Faults: []Fault{fault}, NHC: NHCSpec{Duration: 10 * time.Second, OurTimeout: 20 * time.Minute},
		Recreate: &RecreateSpec{Node: 0, After: 30 * time.Second, Gap: gap}}
	return replicaWorld(t, sc)
}

// stepUntil runs the world alone (no operator), once a second, until d
// from its start.
func stepUntil(w *World, d time.Duration) {
	for until := w.start.Add(d); w.now.Before(until); {
		w.now = w.now.Add(time.Second)
		w.step()
	}
}

// gatewayPods are the pods bound to the node.
func gatewayPods(w *World, node string) []types.UID {
	var out []types.UID
	for _, p := range w.api.pods() {
		if p.Spec.NodeName == node {
			out = append(out, p.UID)
		}
	}
	return out
}

// TestNodeRecreated: the admin deletes the NotReady Node and re-creates it
// without status; the old Lease goes with the old Node, NHC deletes its CRs
// of the deleted node, the node lifecycle controller marks the new object
// Unknown at once (it remembers the name), and a kubelet cut off from the
// control plane shows nothing on it until the cut heals.
func TestNodeRecreated(t *testing.T) {
	w := recreateWorld(t, Fault{Kind: ControlPlaneCut, For: 4 * time.Minute}, 20*time.Second)
	old := w.api.node("n1").UID
	stepUntil(w, 85*time.Second)
	if len(w.nhcOwned("n1")) == 0 {
		t.Fatal("NHC created no CR for the NotReady node")
	}
	stepUntil(w, 100*time.Second)
	if !w.recreate.done || w.api.node("n1") != nil {
		t.Fatal("the admin did not delete n1 30 s after it went NotReady")
	}
	if w.api.lease("n1") != nil {
		t.Error("the garbage collector left the deleted Node's Lease")
	}
	if crs := w.nhcOwned("n1"); len(crs) != 0 {
		t.Errorf("NHC kept %d CRs of the deleted node", len(crs))
	}
	stepUntil(w, 125*time.Second)
	node := w.api.node("n1")
	if node == nil || node.UID == old || node.Labels[corev1.LabelHostname] != "n1" {
		t.Fatalf("n1 not re-created from its manifest with a new UID: %+v", node)
	}
	ready := readyCondition(node)
	if ready == nil || ready.Status != corev1.ConditionUnknown || ready.Reason != reasonNeverUpdated ||
		!ready.LastHeartbeatTime.Equal(&node.CreationTimestamp) {
		t.Errorf("Ready on the new object: %+v, want Unknown, %s, heartbeat at creation", ready, reasonNeverUpdated)
	}
	if w.api.lease("n1") != nil {
		t.Error("a Lease appeared while the kubelet is cut off")
	}
	if len(gatewayPods(w, "n1")) == 0 {
		t.Error("Pod GC deleted the pods although the Node was back within the quarantine")
	}
	stepUntil(w, 5*time.Minute)
	ready = readyCondition(w.api.node("n1"))
	if ready.Status != corev1.ConditionTrue || ready.Reason == reasonNeverUpdated {
		t.Errorf("after the cut the kubelet's status did not land on the new object: %+v", ready)
	}
	lease := w.api.lease("n1")
	if lease == nil || lease.OwnerReferences[0].UID != w.api.node("n1").UID {
		t.Errorf("the kubelet did not re-create its Lease owned by the new Node: %+v", lease)
	}
}

// TestNodeRecreatedLate: a Node missing past Pod GC's quarantine loses its
// pods (force-deleted) while the kubelet, cut off, keeps the container.
func TestNodeRecreatedLate(t *testing.T) {
	w := recreateWorld(t, Fault{Kind: ControlPlaneCut}, time.Minute)
	stepUntil(w, 100*time.Second)
	pods := gatewayPods(w, "n1")
	if len(pods) == 0 || w.api.node("n1") != nil {
		t.Fatal("want n1 deleted with its pod still bound")
	}
	stepUntil(w, 150*time.Second)
	if got := gatewayPods(w, "n1"); len(got) != 0 {
		t.Errorf("Pod GC left %d pods of the missing node past its quarantine", len(got))
	}
	if w.nodes[0].container(pods[0]) == nil {
		t.Error("the cut-off kubelet stopped the container it cannot hear about")
	}
}

// TestKubeletRegistersMissingNode: a machine that boots while its Node is
// missing registers it; the admin's re-creation then fails.
func TestKubeletRegistersMissingNode(t *testing.T) {
	w := recreateWorld(t, Fault{Kind: Reboot, For: 110 * time.Second}, time.Minute)
	stepUntil(w, 100*time.Second)
	if w.api.node("n1") != nil {
		t.Fatal("want n1 deleted while the machine is down")
	}
	stepUntil(w, 150*time.Second)
	node := w.api.node("n1")
	if node == nil || readyCondition(node) == nil || readyCondition(node).Status != corev1.ConditionTrue {
		t.Fatalf("the booted kubelet did not register and report its Node: %+v", node)
	}
	stepUntil(w, 170*time.Second)
	if w.api.node("n1").UID != node.UID {
		t.Error("the admin replaced the Node the kubelet registered")
	}
}

// TestGenerateRecreate: the admin is drawn in about half the episodes,
// re-creating 0-60 s after the deletion.
func TestGenerateRecreate(t *testing.T) {
	drawn := 0
	for i := range 200 {
		sc := &Scenario{Nodes: 4, Instances: []InstanceSpec{{Node: 2}}}
		r := generateRecreate(rand.New(rand.NewPCG(uint64(i), 7)), sc)
		if r == nil {
			continue
		}
		drawn++
		if r.Gap < 0 || r.Gap > time.Minute || r.Node < 0 || r.Node >= sc.Nodes {
			t.Errorf("drew %+v", r)
		}
	}
	if drawn < 70 || drawn > 130 {
		t.Errorf("drew %d of 200, want about half", drawn)
	}
}

// TestFARNodeNotFound: FAR turns a CR of a missing node False, a reported
// success included, and keeps a deleted one's finalizer until the Node is
// back.
func TestFARNodeNotFound(t *testing.T) {
	w := replicaWorld(t, &Scenario{FAR: FARSpec{Installed: true}})
	cr := &unstructured.Unstructured{Object: map[string]any{fieldSpec: map[string]any{}}}
	cr.SetGroupVersionKind(gvkFAR)
	cr.SetNamespace(remediationNamespace)
	cr.SetName("n1")
	cr.SetFinalizers([]string{farFinalizer})
	for _, c := range []string{"Processing", farCondition, "Succeeded"} {
		setUnstructuredCondition(cr, c, statusTrue, w.now)
	}
	w.api.create(cr)
	saved := savedManifest(w.api.node("n1"))
	w.api.markDeleted(w.api.node("n1"))
	w.api.markDeleted(cr)
	w.fenceAgents()
	if got := conditionStatus(cr, farCondition); got != metav1.ConditionFalse {
		t.Errorf("%s=%s with the node missing, want False", farCondition, got)
	}
	if w.api.get(gvkFAR, remediationNamespace, "n1") == nil {
		t.Fatal("the deleted CR went while its node is missing")
	}
	w.api.create(saved)
	w.fenceAgents()
	if w.api.get(gvkFAR, remediationNamespace, "n1") != nil {
		t.Error("the deleted CR stayed once its node is back")
	}
}
