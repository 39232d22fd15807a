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
)

// handoverWorld is replicaWorld with n1 hit by fault at 10 s for 3
// minutes, and the admin who puts a removed out-of-service taint back 20 s
// later and removes theirs a minute after the node is Ready again. At 80 s,
// NotReady by then, n1 gets the operator's taint and a fencer removes it by
// key.
func handoverWorld(t *testing.T, kind FaultKind) *World {
	t.Helper()
	sc := &Scenario{Faults: []Fault{{Kind: kind, At: 10 * time.Second, For: 3 * time.Minute, Nodes: []int{0}}},
		Retaint: &RetaintSpec{After: 20 * time.Second, TimeAdded: true, Lingers: time.Minute}}
	w := replicaWorld(t, sc)
	stepUntil(w, 80*time.Second)
	node := w.api.node("n1")
	if nodeReady(node) {
		t.Fatal("n1 still Ready 70 s after its fault")
	}
	w.addTaint(node, outOfServiceTaint(), operator)
	w.removeTaint(node, corev1.TaintNodeOutOfService)
	return w
}

// TestTaintHandover: a powered-off node whose operator taint a fencer took
// off gets the admin's taint After later, kept until the node has been
// Ready for Lingers.
func TestTaintHandover(t *testing.T) {
	w := handoverWorld(t, PowerLoss)
	stepUntil(w, 95*time.Second)
	if outOfService(w.api.node("n1")) {
		t.Fatal("the admin tainted n1 before After")
	}
	stepUntil(w, 105*time.Second)
	if !outOfService(w.api.node("n1")) || w.taintedBy["n1"] != "an admin" {
		t.Fatalf("the admin did not put a taint back on powered-off n1 (taintedBy %q)", w.taintedBy["n1"])
	}
	stepUntil(w, 4*time.Minute)
	if !outOfService(w.api.node("n1")) {
		t.Fatal("the admin removed their taint before n1 was Ready for a minute")
	}
	stepUntil(w, 6*time.Minute)
	if outOfService(w.api.node("n1")) {
		t.Error("the admin kept their taint on n1 two minutes after it was Ready again")
	}
}

// TestTaintHandoverRunningNode: the admin taints only a machine that is
// off; one cut from the control plane still runs.
func TestTaintHandoverRunningNode(t *testing.T) {
	w := handoverWorld(t, ControlPlaneCut)
	stepUntil(w, 2*time.Minute)
	if outOfService(w.api.node("n1")) {
		t.Error("the admin tainted n1, which is powered on")
	}
}

// TestGenerateRetaint: the admin is drawn in about half the episodes,
// looking within a minute.
func TestGenerateRetaint(t *testing.T) {
	drawn := 0
	for i := range 200 {
		r := generateRetaint(rand.New(rand.NewPCG(uint64(i), 9)))
		if r == nil {
			continue
		}
		drawn++
		if r.After < 0 || r.After > time.Minute || r.Lingers < time.Minute || r.Lingers > 10*time.Minute {
			t.Errorf("drew %+v", r)
		}
	}
	if drawn < 70 || drawn > 130 {
		t.Errorf("drew %d of 200, want about half", drawn)
	}
}
