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

package harness

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// The timeline evaluates its runs only on changes that can move them: the
// healthy nodes' heartbeats and pods elsewhere must not queue milestones.
func TestTrackerConcerns(t *testing.T) {
	tr := &tracker{runs: []*Run{
		{Node: "node-0001", Gateway: &Gateway{Namespace: "gw-1"}},
		{Node: "node-0002", Gateway: &Gateway{Namespace: "gw-2"}},
	}}
	meta := func(namespace, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: name}
	}
	for _, tc := range []struct {
		name string
		obj  any
		want bool
	}{
		{"a failed node", &corev1.Node{ObjectMeta: meta("", "node-0002")}, true},
		{"a healthy node's heartbeat", &corev1.Node{ObjectMeta: meta("", "node-2999")}, false},
		{"a gateway's pod, old or replacement", &corev1.Pod{ObjectMeta: meta("gw-1", "s3gw-x")}, true},
		{"a filler pod", &corev1.Pod{ObjectMeta: meta("filler", "pause-x")}, false},
		{"any VolumeAttachment", &storagev1.VolumeAttachment{ObjectMeta: meta("", "csi-1")}, true},
		{"any S3GWRemediation", &s3gwv1alpha1.S3GWRemediation{ObjectMeta: meta("default", "node-0001")}, true},
	} {
		if got := tr.concerns(tc.obj); got != tc.want {
			t.Errorf("%s: concerns %v, want %v", tc.name, got, tc.want)
		}
	}
	if (&tracker{}).concerns(&corev1.Node{ObjectMeta: meta("", "node-0001")}) {
		t.Error("a node concerns a tracker with no runs")
	}
}
