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

// lostKubelet makes n1 look as a dead kubelet leaves it: Ready=Unknown,
// its volumesInUse as it last posted them, and its s3gw pod gone from the
// API (a fencer's ResourceDeletion): the attach-detach controller wants
// the volume off n1 and finds it still in use.
func lostKubelet(t *testing.T, w *World) {
	t.Helper()
	node := w.api.node("n1")
	readyCondition(node).Status = corev1.ConditionUnknown
	w.api.touch(node)
	for _, p := range w.api.pods() {
		if p.Spec.NodeName == "n1" {
			w.api.remove(p)
		}
	}
}

// TestForceDetachOnTimeoutFollowsTheSetting: a volume a lost node still
// lists in use is detached once the 6-minute timeout passes, unless
// kube-controller-manager runs with --disable-force-detach-on-timeout;
// the out-of-service taint detaches it either way (reconciler.go,
// reconcile).
func TestForceDetachOnTimeoutFollowsTheSetting(t *testing.T) {
	for _, tc := range []struct {
		name      string
		disabled  bool
		taint     bool
		wantAfter bool // detached 7 minutes after the detach request
	}{
		{"default: force detach after 6 minutes", false, false, true},
		{"disabled: never on timeout", true, false, false},
		{"disabled: the out-of-service taint still detaches", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := replicaWorld(t, &Scenario{Neighbours: NeighbourSettings{DisableForceDetachOnTimeout: tc.disabled}})
			v := w.volumes[0]
			lostKubelet(t, w)
			va := attachmentName(v.Name, "n1")
			w.attachDetach()
			if a := w.api.kubeAttachment(va); a == nil || a.DeletionTimestamp != nil {
				t.Fatal("detached at the request, while n1 still lists the volume in use")
			}
			if tc.taint {
				node := w.api.node("n1")
				node.Spec.Taints = append(node.Spec.Taints, outOfServiceTaint())
				w.api.touch(node)
			}
			w.now = w.now.Add(7 * time.Minute)
			w.attachDetach()
			a := w.api.kubeAttachment(va)
			if detached := a == nil || a.DeletionTimestamp != nil; detached != tc.wantAfter {
				t.Errorf("detached after 7 minutes: %v, want %v", detached, tc.wantAfter)
			}
		})
	}
}

// failEverything leaves the volume as a double failure does: detached,
// every replica healthy once and failed, r-0 a minute before r-1, on
// nodes Longhorn counts Ready.
func failEverything(w *World, v *Volume) {
	lv := w.api.longhornVolume(v.Name)
	lv.Spec.NodeID, lv.Status.State, lv.Status.CurrentNodeID = "", stateDetached, ""
	for k, r := range v.Replicas {
		w.failReplica(r, w.nodeClock(r.Node).Add(time.Duration(k)*30*time.Second).Format(time.RFC3339), "test")
	}
	v.current = nil
}

// TestAutoSalvageFollowsTheSetting: with every replica failed, the volume
// is faulted either way; only with auto-salvage on does Longhorn clear the
// failedAt of those that failed within a minute of the last, and request
// salvage (volume_controller.go, ReconcileVolumeState). Off, nothing is
// served until someone salvages by hand.
func TestAutoSalvageFollowsTheSetting(t *testing.T) {
	for _, off := range []bool{false, true} {
		w := replicaWorld(t, &Scenario{Neighbours: NeighbourSettings{AutoSalvageOff: off}})
		v := w.volumes[0]
		failEverything(w, v)
		lv := w.api.longhornVolume(v.Name)
		w.autoSalvage(v, lv, w.now)
		salvaged := 0
		for _, r := range v.Replicas {
			if w.api.longhornReplica(r.Name).Spec.FailedAt == "" {
				salvaged++
			}
		}
		next := w.nextEngine(v)
		switch {
		case !off && (salvaged != len(v.Replicas) || !v.salvageRequested || next == nil):
			t.Errorf("auto-salvage on: %d of %d replicas salvaged, salvage requested %v, next engine %v; want all, true, one",
				salvaged, len(v.Replicas), v.salvageRequested, next != nil)
		case off && (salvaged != 0 || v.salvageRequested || next != nil || lv.Status.Robustness != robustnessFaulted):
			t.Errorf("auto-salvage off: %d replicas salvaged, salvage requested %v, next engine %v, robustness %s; "+
				"want none, false, none, faulted", salvaged, v.salvageRequested, next != nil, lv.Status.Robustness)
		}
	}
}

// TestReplicaReplenishment: a degraded attached volume whose failed
// replica's node is down gets a new replica on a node without one once it
// has been degraded for replica-replenishment-wait-interval, at once with
// the interval 0; a failed replica on a node Longhorn reaches is reused
// instead (replenishReplicas, RequireNewReplica).
func TestReplicaReplenishment(t *testing.T) {
	for _, tc := range []struct {
		name        string
		noWait      bool
		downFor     bool // r-1's node n3 down
		after       time.Duration
		wantNew     bool
		wantReused  bool
		wantReplica string // node of the new replica
	}{
		{"default: waits 600 s", false, true, 599 * time.Second, false, false, ""},
		{"default: a new replica after 600 s", false, true, 601 * time.Second, true, false, "n1"},
		{"interval 0: at once", true, true, 0, true, false, "n1"},
		{"a failed replica Longhorn reaches is reused", true, false, 0, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := replicaWorld(t, &Scenario{Neighbours: NeighbourSettings{ReplenishWithoutWait: tc.noWait}})
			v := w.volumes[0]
			lv := w.api.longhornVolume(v.Name)
			failed := v.Replicas[1]
			w.failReplica(failed, w.nodeClock(failed.Node).Format(time.RFC3339), "test")
			markLonghornDown(w, failed.Node.Name, tc.downFor)
			v.degradedAt = w.nodeClock(w.nodes[0])
			w.replenishReplicas(v, lv, v.degradedAt.Add(tc.after))
			created := len(v.Replicas) == 3
			reused := w.api.longhornReplica(failed.Name).Spec.FailedAt == ""
			if created != tc.wantNew || reused != tc.wantReused {
				t.Fatalf("new replica %v, failed one reused %v; want %v, %v", created, reused, tc.wantNew, tc.wantReused)
			}
			if created {
				r := v.Replicas[2]
				cr := w.api.longhornReplica(r.Name)
				if r.Node.Name != tc.wantReplica || cr.Spec.DesireState != stateRunning || cr.Spec.HealthyAt != "" {
					t.Errorf("new replica on %s, desired %s, healthyAt %q; want on %s, running, never healthy",
						r.Node.Name, cr.Spec.DesireState, cr.Spec.HealthyAt, tc.wantReplica)
				}
			}
		})
	}
}

// TestNeighbourSettings: each setting parses by its upstream name, the
// zero value is the upstream defaults, and the draw gives each value.
func TestNeighbourSettings(t *testing.T) {
	if s := (NeighbourSettings{}); s.String() != "upstream defaults" || s.replicaReplenishmentWait() != 600*time.Second {
		t.Errorf("zero settings: %s, wait %s", s, s.replicaReplenishmentWait())
	}
	pins, err := parseNeighbourPins("disable-force-detach-on-timeout=true,auto-salvage=false,replica-replenishment-wait-interval=0")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := pins.apply(NeighbourSettings{})
	if want := (NeighbourSettings{DisableForceDetachOnTimeout: true, AutoSalvageOff: true, ReplenishWithoutWait: true}); s != want {
		t.Errorf("pinned %+v, want %+v", s, want)
	}
	for _, bad := range []string{"auto-salvage", "auto-salvage=maybe", "replica-replenishment-wait-interval=300", "salvage=false"} {
		if _, err := parseNeighbourPins(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	seen := map[NeighbourSettings]bool{}
	r := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		seen[generateNeighbours(r)] = true
	}
	if len(seen) != 8 {
		t.Errorf("200 draws gave %d of the 8 combinations", len(seen))
	}
}
