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

package workloads

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// The API server refuses such a selector; one stored before that rule
// existed fails without reading anything.
func TestListRefusesASelectorThatDoesNotParse(t *testing.T) {
	spec := s3gwv1alpha1.S3GWRemediationSpec{WorkloadSelector: &s3gwv1alpha1.LabelSelector{
		MatchLabels: map[string]s3gwv1alpha1.LabelValue{"-not/a/valid key": "s3gw"}}}
	_, err := List(context.Background(), nil, spec, "worker-1")
	var invalid *InvalidSelectorError
	if !errors.As(err, &invalid) {
		t.Fatalf("List = %v, want an InvalidSelectorError", err)
	}
}

func TestHeldByFinalizers(t *testing.T) {
	now := metav1.Now()
	pod := func(grace *int64, finalizers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Finalizers: finalizers}}
		if grace != nil {
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, grace
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"not deleted", pod(nil), false},
		{"evicted with a grace period", pod(ptr.To[int64](30)), false},
		{"force-deleted, held by a finalizer", pod(ptr.To[int64](0), "example.com/hold"), true},
		// The crash loop e2e found it: the manager killed between the two
		// steps of its force delete left this pod behind for good.
		{"force delete cut short", pod(ptr.To[int64](0)), false},
	} {
		if got := heldByFinalizers(tc.pod); got != tc.want {
			t.Errorf("%s: heldByFinalizers = %v, want %v", tc.name, got, tc.want)
		}
	}
}
