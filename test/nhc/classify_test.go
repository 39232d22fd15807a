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

package nhc

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestClassifyByEachConditionsDuration: each unhealthy condition has its
// own duration, as in the shipped NodeHealthCheck (Ready=False 30 s,
// Ready=Unknown 2 s); a node in a condition for less than its duration is
// neither healthy nor unhealthy, and the pass comes back 1 s after.
func TestClassifyByEachConditionsDuration(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	conditions := []UnhealthyCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Duration: 30 * time.Second},
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Duration: 2 * time.Second},
	}
	node := func(status corev1.ConditionStatus, since time.Duration) corev1.Node {
		return corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(now.Add(-since)),
		}}}}
	}
	for _, tc := range []struct {
		name               string
		node               corev1.Node
		healthy, unhealthy bool
		requeue            time.Duration
	}{
		{name: "Ready", node: node(corev1.ConditionTrue, time.Hour), healthy: true},
		{name: "no Ready condition", node: corev1.Node{}, healthy: true},
		{name: "Unknown past its 2 s", node: node(corev1.ConditionUnknown, 3*time.Second), unhealthy: true},
		{name: "Unknown within its 2 s", node: node(corev1.ConditionUnknown, time.Second), requeue: 2 * time.Second},
		{name: "False within its 30 s", node: node(corev1.ConditionFalse, 10*time.Second), requeue: 21 * time.Second},
		{name: "False past its 30 s", node: node(corev1.ConditionFalse, 31*time.Second), unhealthy: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			e := &Emulator{Clock: clocktesting.NewFakePassiveClock(now), UnhealthyConditions: conditions}
			healthy, unhealthy, requeue := e.classify([]corev1.Node{tc.node})
			g.Expect(healthy).To(HaveLen(boolToInt(tc.healthy)))
			g.Expect(unhealthy).To(HaveLen(boolToInt(tc.unhealthy)))
			g.Expect(requeue).To(Equal(tc.requeue))
		})
	}

	// Without conditions, NHC's defaults: Ready False or Unknown for
	// UnhealthyDuration.
	e := &Emulator{Clock: clocktesting.NewFakePassiveClock(now), UnhealthyDuration: 10 * time.Second}
	_, unhealthy, _ := e.classify([]corev1.Node{node(corev1.ConditionFalse, 11*time.Second), node(corev1.ConditionUnknown, 5*time.Second)})
	NewWithT(t).Expect(unhealthy).To(HaveLen(1))
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
