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

package attachments

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestTaintOwner(t *testing.T) {
	taint := OutOfServiceTaint()
	added := metav1.NewTime(time.Date(2026, time.March, 4, 12, 0, 0, 0, time.UTC))
	ours := taint
	ours.TimeAdded = &added
	later := metav1.NewTime(added.Add(time.Minute))
	admins := taint
	admins.TimeAdded = &later
	record := "uid-1@" + added.UTC().Format(time.RFC3339)
	node := func(annotation string, taints ...corev1.Taint) *corev1.Node {
		n := &corev1.Node{Spec: corev1.NodeSpec{Taints: taints}}
		if annotation != "" {
			n.Annotations = map[string]string{TaintOwnerAnnotation: annotation}
		}
		return n
	}
	noExecute := func(key string) corev1.Taint {
		return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}
	}
	tests := []struct {
		name  string
		node  *corev1.Node
		owner types.UID
		stale bool
	}{
		{"ours: the taint and the annotation naming it", node(record, ours), "uid-1", false},
		{"someone else's: no annotation", node("", ours), "", false},
		{"annotation left without the taint (a fencer removed it by key)", node(record), "", true},
		{"annotation with another taint only", node(record, noExecute("other")), "", true},
		{"a taint added later by an admin, under a stale annotation", node(record, admins), "", true},
		{"a taint without timeAdded under the annotation", node(record, taint), "", true},
		{"an annotation that does not parse (no timeAdded)", node("uid-1", ours), "", true},
		{"no taint, no annotation", node(""), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			owner, stale := TaintOwnership(tt.node, taint)
			g.Expect(owner).To(Equal(tt.owner))
			g.Expect(stale).To(Equal(tt.stale))
			g.Expect(TaintOwner(tt.node, taint)).To(Equal(tt.owner))
		})
	}
}
