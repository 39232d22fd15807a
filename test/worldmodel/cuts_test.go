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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// TestTargetedCuts: each cut strikes a replica node other than the failed
// one, after the operator's write that times it, only with its hazard on,
// and the release cut only after a ticket removal.
func TestTargetedCuts(t *testing.T) {
	all := Hazards{CutAfterTicket: true, CutAfterRelease: true}
	tests := []struct {
		name    string
		hazards Hazards
		// replicas are the volume's replica nodes (s3gw fails on n1).
		replicas        []int
		ticket, release bool
		// cut is the node cut from the control plane afterwards, or "".
		cut string
	}{
		{name: "ticket removed: a replica node is cut", hazards: all, replicas: []int{1, 2}, ticket: true, cut: "n2"},
		{name: "ticket removed, hazard off: none", hazards: all.without("cut-after-ticket"), replicas: []int{1, 2}, ticket: true},
		{name: "the failed node is no candidate", hazards: all, replicas: []int{0, 2}, ticket: true, cut: "n3"},
		{name: "no replica beside the failed node's: none", hazards: all, replicas: []int{0}, ticket: true},
		{name: "release without a ticket removal (today's operator): none", hazards: all, replicas: []int{1, 2}, release: true},
		{name: "release after a ticket removal: cut", hazards: all.without("cut-after-ticket"), replicas: []int{1, 2},
			ticket: true, release: true, cut: "n2"},
		{name: "release after a ticket removal, hazards off: none", replicas: []int{1, 2}, ticket: true, release: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &Scenario{TicketCut: &TargetedCut{Delay: 2 * time.Second, For: time.Minute},
				ReleaseCut: &TargetedCut{Delay: 3 * time.Second, For: time.Minute}}
			tt.hazards.apply(sc)
			w := replicaWorld(t, sc)
			v := w.volumes[0]
			v.Replicas = v.Replicas[:0]
			for _, n := range tt.replicas {
				v.Replicas = append(v.Replicas, &Replica{Name: v.Name + "-r-" + itoa(n), Node: w.nodes[n], Running: true})
			}
			if tt.ticket {
				before := w.api.longhornAttachment(v.Name)
				after := before.DeepCopy()
				after.Spec.AttachmentTickets = map[string]*longhorn.AttachmentTicket{}
				w.audit("update", before, after)
			}
			if tt.release {
				before := w.api.node("n1")
				after := before.DeepCopy()
				after.Status.VolumesInUse = []corev1.UniqueVolumeName{}
				w.audit("update", before, after)
			}
			w.now = w.now.Add(5 * time.Second)
			w.runEvents()
			cut := ""
			for _, n := range w.nodes {
				if !n.CP {
					cut += n.Name
				}
			}
			if cut != tt.cut {
				t.Errorf("cut %q, want %q", cut, tt.cut)
			}
		})
	}
}

// TestHazardNames: every hazard has a name that parses back to it alone,
// "all" turns every one on, and all but the targeted cuts, SNR, the node
// re-creation, the taint handover and the neighbours' settings are on by
// default.
func TestHazardNames(t *testing.T) {
	all, err := parseHazards("all")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hazardNames {
		parsed, err := parseHazards(h.name)
		if err != nil || parsed.String() != h.name {
			t.Errorf("%s parses to %s (%v)", h.name, parsed, err)
		}
		if !*h.field(&all) {
			t.Errorf("all leaves %s off", h.name)
		}
		optIn := strings.HasPrefix(h.name, "cut-after-") || h.name == "snr" || h.name == "node-recreated" ||
			h.name == "taint-handover" || h.name == "neighbour-settings"
		if *h.field(&defaultHazards) == optIn {
			t.Errorf("%s: on by default is %v, want %v", h.name, *h.field(&defaultHazards), !optIn)
		}
	}
}

// TestTargetedCutsOutlastNodeMonitorGrace: every targeted cut lasts long
// enough for the node lifecycle controller to mark the node NotReady (grace
// period plus one monitor period), so the node's return, with the
// controller's Ready=False on its pods, happens in every episode with one.
func TestTargetedCutsOutlastNodeMonitorGrace(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		if c := generateCut(r, 5*time.Second); c != nil && c.For <= nodeMonitorGracePeriod+nodeMonitorPeriod*time.Second {
			t.Fatalf("cut of %s: Kubernetes never marks the node NotReady", c.For)
		}
	}
}
