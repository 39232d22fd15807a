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

package longhornsim

import (
	"testing"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// fakeView describes nodes by set membership.
func fakeView(ready, down, reachable []string) clusterView {
	in := func(set []string) func(string) bool {
		return func(n string) bool {
			for _, s := range set {
				if s == n {
					return true
				}
			}
			return false
		}
	}
	return clusterView{ready: in(ready), down: in(down), reachable: in(reachable)}
}

func csiTicket(id, node string) *longhorn.AttachmentTicket {
	return &longhorn.AttachmentTicket{ID: id, Type: longhorn.TicketTypeCSIAttacher, NodeID: node}
}

func tickets(ts ...*longhorn.AttachmentTicket) map[string]*longhorn.AttachmentTicket {
	m := map[string]*longhorn.AttachmentTicket{}
	for _, t := range ts {
		m[t.ID] = t
	}
	return m
}

func TestStepAttachment(t *testing.T) {
	const delay = 1500 * time.Millisecond
	healthy := fakeView([]string{"a", "b"}, nil, []string{"a", "b"})
	// "a" stopped heartbeating but Kubernetes has not noticed yet.
	aLostUndetected := fakeView([]string{"a", "b"}, nil, []string{"b"})
	// Kubernetes (and so Longhorn) has declared "a" down.
	aDown := fakeView([]string{"b"}, []string{"a"}, []string{"b"})

	attachedA := attachment{nodeID: "a", state: stateAttached, currentNodeID: "a", engineNodeID: "a"}
	detached := attachment{state: stateDetached}

	for _, tc := range []struct {
		name         string
		cur          attachment
		tickets      map[string]*longhorn.AttachmentTicket
		replicas     []replicaRecord
		view         clusterView
		attachingFor time.Duration
		want         attachment
		wantWait     time.Duration
	}{
		{
			name: "detached volume starts attaching to its ticket's node",
			cur:  detached, tickets: tickets(csiTicket("csi-1", "a")), view: healthy,
			want:     attachment{nodeID: "a", state: stateAttaching, engineNodeID: "a"},
			wantWait: delay,
		},
		{
			name: "attach completes after the delay",
			cur:  attachment{nodeID: "a", state: stateAttaching, engineNodeID: "a"}, tickets: tickets(csiTicket("csi-1", "a")),
			view: healthy, attachingFor: delay,
			want: attachedA,
		},
		{
			name: "attach waits for the rest of the delay",
			cur:  attachment{nodeID: "a", state: stateAttaching, engineNodeID: "a"}, tickets: tickets(csiTicket("csi-1", "a")),
			view: healthy, attachingFor: time.Second,
			want:     attachment{nodeID: "a", state: stateAttaching, engineNodeID: "a"},
			wantWait: 500 * time.Millisecond,
		},
		{
			name: "no attach to a node Longhorn does not consider Ready",
			cur:  detached, tickets: tickets(csiTicket("csi-1", "a")), view: aDown,
			want: detached,
		},
		{
			name: "attached volume stays put while its ticket exists, even on a down node",
			cur:  attachedA, tickets: tickets(csiTicket("csi-1", "a")), view: aDown,
			want: attachedA,
		},
		{
			name: "a second ticket for another node does not move an attached volume",
			cur:  attachedA, tickets: tickets(csiTicket("csi-1", "a"), csiTicket("csi-2", "b")), view: healthy,
			want: attachedA,
		},
		{
			name: "ticket removed on a healthy node: detach completes at once",
			cur:  attachedA, view: healthy,
			want: detached,
		},
		{
			name: "ticket removed on a down node: engine recorded stopped, detached",
			cur:  attachedA, view: aDown,
			want: detached,
		},
		{
			name: "ticket removed on a lost but undetected node: stuck detaching",
			cur:  attachedA, view: aLostUndetected,
			want: attachment{state: stateDetaching, currentNodeID: "a", engineNodeID: "a"},
		},
		{
			name:    "stuck detach completes once the node is declared down, then attaches elsewhere",
			cur:     attachment{state: stateDetaching, currentNodeID: "a", engineNodeID: "a"},
			tickets: tickets(csiTicket("csi-2", "b")), view: aDown,
			want:     attachment{nodeID: "b", state: stateAttaching, engineNodeID: "b"},
			wantWait: delay,
		},
		{
			name: "moving ticket: detach from the old node and attach to the new one in one pass",
			cur:  attachedA, tickets: tickets(csiTicket("csi-2", "b")), view: aDown,
			want:     attachment{nodeID: "b", state: stateAttaching, engineNodeID: "b"},
			wantWait: delay,
		},
		{
			name: "ticket removed with running replicas on live and down nodes: all recorded stopped, detached",
			cur:  attachedA, view: aDown,
			replicas: []replicaRecord{{"a", instanceUnknown}, {"b", instanceRunning}},
			want:     detached,
		},
		{
			name: "ticket removed while a replica's node is lost but undetected: engine stops, volume waits",
			cur:  attachment{nodeID: "b", state: stateAttached, currentNodeID: "b", engineNodeID: "b"}, view: aLostUndetected,
			replicas: []replicaRecord{{"a", instanceRunning}, {"b", instanceRunning}},
			want:     attachment{state: stateDetaching, currentNodeID: "b"},
		},
		{
			name:     "waiting detach completes once the replica's node is declared down",
			cur:      attachment{state: stateDetaching, currentNodeID: "b"},
			replicas: []replicaRecord{{"a", instanceRunning}, {"b", instanceStopped}}, view: aDown,
			want: detached,
		},
		{
			name:     "a replica already recorded stopped on a lost node does not hold the detach",
			cur:      attachment{state: stateDetaching, currentNodeID: "b"},
			replicas: []replicaRecord{{"a", instanceStopped}, {"b", instanceStopped}}, view: aLostUndetected,
			want: detached,
		},
		{
			name: "a volume waiting for a replica does not attach to a new ticket",
			cur:  attachment{state: stateDetaching, currentNodeID: "b"}, tickets: tickets(csiTicket("csi-2", "b")),
			replicas: []replicaRecord{{"a", instanceRunning}}, view: aLostUndetected,
			want: attachment{state: stateDetaching, currentNodeID: "b"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := stepAttachment(tc.cur, tc.tickets, tc.replicas, tc.view, tc.attachingFor, delay)
			if got.next != tc.want || got.waitFor != tc.wantWait {
				t.Errorf("stepAttachment() = %+v wait %s, want %+v wait %s", got.next, got.waitFor, tc.want, tc.wantWait)
			}
		})
	}
}

func TestPickTicketPrefersPriorityThenID(t *testing.T) {
	ui := &longhorn.AttachmentTicket{ID: "longhorn-ui", Type: "longhorn-api", NodeID: "c"}
	got := pickTicket(tickets(csiTicket("csi-b", "b"), csiTicket("csi-a", "a"), ui))
	if got != ui {
		t.Errorf("pickTicket() = %+v, want the longhorn-api ticket", got)
	}
	got = pickTicket(tickets(csiTicket("csi-b", "b"), csiTicket("csi-a", "a")))
	if got.ID != "csi-a" {
		t.Errorf("pickTicket() = %s, want csi-a", got.ID)
	}
	if pickTicket(nil) != nil {
		t.Error("pickTicket(nil) should be nil")
	}
}
