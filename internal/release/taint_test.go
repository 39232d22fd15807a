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

package release

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestTaintOwner(t *testing.T) {
	taint := OutOfServiceTaint()
	node := func(annotation string, taints ...corev1.Taint) *corev1.Node {
		n := &corev1.Node{Spec: corev1.NodeSpec{Taints: taints}}
		if annotation != "" {
			n.Annotations = map[string]string{TaintOwnerAnnotation: annotation}
		}
		return n
	}
	noExecute := func(key string) corev1.Taint {
		return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute}
	}
	tests := []struct {
		name  string
		node  *corev1.Node
		owner types.UID
	}{
		{"ours: taint and annotation", node("uid-1", taint), "uid-1"},
		{"someone else's: no annotation", node("", taint), ""},
		{"annotation left without the taint", node("uid-1"), ""},
		{"annotation with another taint only", node("uid-1", noExecute("other")), ""},
		{"no taint, no annotation", node(""), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(TaintOwner(tt.node, taint)).To(Equal(tt.owner))
		})
	}
}
