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

package fencing

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestOwns(t *testing.T) {
	at := time.Date(2026, time.March, 4, 12, 0, 0, 0, time.UTC)
	ours := OutOfServiceTaint()
	ours.TimeAdded = ptr.To(metav1.NewTime(at))
	onNode := func(taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{Spec: corev1.NodeSpec{Taints: taints}}
	}
	with := func(timeAdded *metav1.Time, mutate ...func(*corev1.Taint)) corev1.Taint {
		t := OutOfServiceTaint()
		t.TimeAdded = timeAdded
		for _, m := range mutate {
			m(&t)
		}
		return t
	}
	tests := []struct {
		name string
		node *corev1.Node
		owns bool
	}{
		{"the recorded taint", onNode(with(ptr.To(metav1.NewTime(at)))), true},
		{"the recorded taint, stored to the second", onNode(with(ptr.To(metav1.NewTime(at.Add(400 * time.Millisecond))))), true},
		{"another value of the same key and effect is still ours", onNode(with(ptr.To(metav1.NewTime(at)), func(t *corev1.Taint) { t.Value = "x" })), true},
		{"someone else's, added at another time", onNode(with(ptr.To(metav1.NewTime(at.Add(time.Second))))), false},
		{"someone else's, without timeAdded", onNode(with(nil)), false},
		{"another effect", onNode(with(ptr.To(metav1.NewTime(at)), func(t *corev1.Taint) { t.Effect = corev1.TaintEffectNoSchedule })), false},
		{"no taint", onNode(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(Owns(tt.node, ours)).To(Equal(tt.owns))
		})
	}
}
