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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

func k8sNode(status corev1.ConditionStatus, since time.Time) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(since),
		}}},
	}
}

func TestLonghornNodeReadiness(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		node       *corev1.Node
		wantReady  bool
		wantReason string
		wantCheck  time.Duration
	}{
		{"ready", k8sNode(corev1.ConditionTrue, now), true, "", 0},
		{"lost heartbeat counts at once", k8sNode(corev1.ConditionUnknown, now), false, longhorn.NodeReasonKubernetesNodeNotReady, 0},
		{"fresh kubelet NotReady is ignored", k8sNode(corev1.ConditionFalse, now.Add(-5*time.Second)), true, "", 10 * time.Second},
		{"kubelet NotReady for 15 s counts", k8sNode(corev1.ConditionFalse, now.Add(-15*time.Second)), false, longhorn.NodeReasonKubernetesNodeNotReady, 0},
		{"no Ready condition yet", &corev1.Node{}, false, longhorn.NodeReasonKubernetesNodeNotReady, 0},
		{"deleted node", nil, false, longhorn.NodeReasonKubernetesNodeGone, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := longhornNodeReadiness(tc.node, now)
			if got.ready != tc.wantReady || got.reason != tc.wantReason || got.recheckAfter != tc.wantCheck {
				t.Errorf("longhornNodeReadiness() = %+v, want ready=%v reason=%q recheck=%s", got, tc.wantReady, tc.wantReason, tc.wantCheck)
			}
		})
	}
}

func lhNode(status, reason string) *longhorn.Node {
	return &longhorn.Node{Status: longhorn.NodeStatus{Conditions: []longhorn.Condition{{
		Type: longhorn.NodeConditionReady, Status: status, Reason: reason,
	}}}}
}

func TestNodeDownNeedsKubernetesReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		node *longhorn.Node
		want bool
	}{
		{"missing Node CR", nil, true},
		{"Kubernetes NotReady", lhNode("False", longhorn.NodeReasonKubernetesNodeNotReady), true},
		{"Kubernetes node gone", lhNode("False", longhorn.NodeReasonKubernetesNodeGone), true},
		{"manager pod down does not count", lhNode("False", "ManagerPodDown"), false},
		{"ready", lhNode("True", ""), false},
	} {
		if got := nodeDown(tc.node); got != tc.want {
			t.Errorf("%s: nodeDown() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSetReadyConditionsKeepsTransitionTime(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	n := &longhorn.Node{}
	setReadyConditions(n, readiness{ready: true}, t0)
	setReadyConditions(n, readiness{ready: true}, t0.Add(time.Minute))
	if got := condition(n.Status.Conditions, longhorn.NodeConditionReady).LastTransitionTime.Time; !got.Equal(t0) {
		t.Errorf("unchanged Ready moved its transition time to %s", got)
	}
	setReadyConditions(n, readiness{reason: longhorn.NodeReasonKubernetesNodeNotReady}, t0.Add(2*time.Minute))
	c := condition(n.Status.Conditions, longhorn.NodeConditionReady)
	if c.Status != "False" || !c.LastTransitionTime.Time.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("Ready after going down = %+v", c)
	}
}
