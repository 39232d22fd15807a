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
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

func TestInvolvedVolumes(t *testing.T) {
	labelled := func(volume string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: volume + "-x", Labels: map[string]string{longhorn.VolumeLabel: volume}}
	}
	volumes := []longhorn.Volume{
		{ObjectMeta: metav1.ObjectMeta{Name: "by-spec"}, Spec: longhorn.VolumeSpec{NodeID: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "by-status"}, Status: longhorn.VolumeStatus{CurrentNodeID: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}, Spec: longhorn.VolumeSpec{NodeID: "n2"}},
	}
	engines := []longhorn.Engine{
		{ObjectMeta: labelled("by-engine"), Spec: longhorn.EngineSpec{NodeID: "n1"}},
		{ObjectMeta: labelled("elsewhere"), Spec: longhorn.EngineSpec{NodeID: "n2"}},
	}
	replicas := []longhorn.Replica{
		{ObjectMeta: labelled("by-replica"), Spec: longhorn.ReplicaSpec{NodeID: "n1"}},
		{ObjectMeta: labelled("by-spec"), Spec: longhorn.ReplicaSpec{NodeID: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}, Spec: longhorn.ReplicaSpec{NodeID: "n1"}},
	}
	tickets := []longhorn.VolumeAttachment{
		{ObjectMeta: metav1.ObjectMeta{Name: "by-ticket"}, Spec: longhorn.VolumeAttachmentSpec{AttachmentTickets: map[string]*longhorn.AttachmentTicket{
			"csi-a": {NodeID: "n1"}, "nil": nil,
		}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}, Spec: longhorn.VolumeAttachmentSpec{AttachmentTickets: map[string]*longhorn.AttachmentTicket{
			"csi-b": {NodeID: "n2"},
		}}},
	}
	reqs := involvedVolumes("n1", volumes, engines, replicas, tickets)
	got := make([]string, 0, len(reqs))
	for _, req := range reqs {
		if req.Namespace != Namespace {
			t.Errorf("request %s in namespace %q, want %q", req.Name, req.Namespace, Namespace)
		}
		got = append(got, req.Name)
	}
	want := []string{"by-engine", "by-replica", "by-spec", "by-status", "by-ticket"}
	if !slices.Equal(got, want) {
		t.Errorf("involvedVolumes(n1) = %v, want %v", got, want)
	}
	if reqs := involvedVolumes("n3", volumes, engines, replicas, tickets); len(reqs) != 0 {
		t.Errorf("involvedVolumes(n3) = %v, want none", reqs)
	}
}

func TestChangedHealth(t *testing.T) {
	node := func(managed string, heartbeat int64) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{cluster.ManagedNodeLabel: managed}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				LastHeartbeatTime: metav1.Unix(heartbeat, 0)}}}}
	}
	p := changedHealth(kubeletRunning)
	for _, tc := range []struct {
		name     string
		old, cur *corev1.Node
		want     bool
	}{
		{"a status heartbeat", node("true", 1), node("true", 2), false},
		{"the kubelet stops", node("true", 1), node("false", 1), true},
		{"the kubelet starts", node("false", 1), node("true", 2), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.cur}); got != tc.want {
				t.Errorf("Update() = %v, want %v", got, tc.want)
			}
		})
	}
	if !p.Create(event.CreateEvent{Object: node("true", 1)}) || !p.Delete(event.DeleteEvent{Object: node("true", 1)}) {
		t.Error("a node's creation and deletion must pass")
	}
}
