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
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

func TestTicketStatuses(t *testing.T) {
	now := metav1.Now()
	view := fakeView([]string{"a"}, []string{"b"}, []string{"a"})
	ts := tickets(csiTicket("csi-a", "a"), csiTicket("csi-b", "b"))
	attachedA := attachment{nodeID: "a", state: stateAttached, currentNodeID: "a", engineNodeID: "a"}

	got := ticketStatuses(ts, attachedA, view, nil, now)
	if !got["csi-a"].Satisfied || got["csi-b"].Satisfied {
		t.Fatalf("satisfied: csi-a=%v csi-b=%v, want true/false", got["csi-a"].Satisfied, got["csi-b"].Satisfied)
	}
	if msg := got["csi-b"].Conditions[0].Message; !strings.Contains(msg, "attached to different node a") {
		t.Errorf("csi-b message = %q", msg)
	}
	if ticketStatuses(nil, attachedA, view, got, now) != nil {
		t.Error("statuses of removed tickets should be dropped")
	}
}

func TestOptionsDescribeAndValidate(t *testing.T) {
	if got := (Options{}).Describe(); got != "longhorn=simulated attach-delay=1.5s node-down-pod-deletion-policy=do-nothing" {
		t.Errorf("Describe() = %q", got)
	}
	if err := (Options{NodeDownPodDeletionPolicy: "delete-statefulset-pod"}).withDefaults().validate(); err == nil {
		t.Error("want an error for a policy the simulator does not implement")
	}
}

func TestSetEngineFollowsAttachment(t *testing.T) {
	view := fakeView([]string{"a", "b"}, nil, []string{"a", "b"})
	replicas := []longhorn.Replica{
		{ObjectMeta: metav1.ObjectMeta{Name: "r-a"}, Spec: longhorn.ReplicaSpec{NodeID: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "r-b"}, Spec: longhorn.ReplicaSpec{NodeID: "b", FailedAt: "2026-11-30T00:00:00Z"}},
	}
	e := &longhorn.Engine{}
	setEngine(e, attachment{nodeID: "a", state: stateAttached, currentNodeID: "a", engineNodeID: "a"}, replicas, view)
	if e.Spec.NodeID != "a" || e.Spec.DesireState != "running" || e.Status.CurrentState != "running" {
		t.Errorf("attached engine = %+v", e)
	}
	if len(e.Status.ReplicaModeMap) != 1 || e.Status.ReplicaModeMap["r-a"] != "RW" {
		t.Errorf("replica modes = %v, want only the healthy r-a in RW", e.Status.ReplicaModeMap)
	}

	downA := fakeView([]string{"b"}, []string{"a"}, []string{"b"})
	setEngine(e, attachment{nodeID: "a", state: stateAttached, currentNodeID: "a", engineNodeID: "a"}, replicas, downA)
	if e.Status.CurrentState != "unknown" || e.Status.ReplicaModeMap["r-a"] != "RW" {
		t.Errorf("engine on a down node = %+v, want unknown with frozen modes", e.Status)
	}

	setEngine(e, attachment{state: stateDetached}, replicas, downA)
	if e.Spec.NodeID != "" || e.Spec.DesireState != "stopped" || e.Status.CurrentState != "stopped" || e.Status.ReplicaModeMap != nil {
		t.Errorf("detached engine = %+v", e)
	}
}

func TestReplicaState(t *testing.T) {
	// "a" is up, "b" lost but not yet counted down, "c" counted down.
	view := fakeView([]string{"a", "b"}, []string{"c"}, []string{"a"})
	withEngine := attachment{nodeID: "a", state: stateAttached, currentNodeID: "a", engineNodeID: "a"}
	engineStopped := attachment{state: stateDetaching, currentNodeID: "a"}

	for _, tc := range []struct {
		name string
		node string
		prev string
		a    attachment
		want string
	}{
		{"runs on a live node while the volume has an engine", "a", instanceStopped, withEngine, instanceRunning},
		{"stops on a live node once the engine has stopped", "a", instanceRunning, engineStopped, instanceStopped},
		{"unknown on a down node while it should run", "c", instanceRunning, withEngine, instanceUnknown},
		{"recorded stopped on a down node once it should stop", "c", instanceUnknown, engineStopped, instanceStopped},
		{"stale on a lost node: still running", "b", instanceRunning, engineStopped, instanceRunning},
		{"stale on a lost node: still stopped", "b", instanceStopped, withEngine, instanceStopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := longhorn.Replica{Spec: longhorn.ReplicaSpec{NodeID: tc.node}, Status: longhorn.ReplicaStatus{CurrentState: tc.prev}}
			if got := replicaState(r, tc.a, view); got != tc.want {
				t.Errorf("replicaState() = %q, want %q", got, tc.want)
			}
		})
	}
}
