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

package remediation

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// TestReleasedSince checks that the replacement timeout starts only once the
// targets are both evicted and released, whichever came last.
func TestReleasedSince(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	cond := func(condType string, status metav1.ConditionStatus, when metav1.Time) metav1.Condition {
		return metav1.Condition{Type: condType, Status: status, LastTransitionTime: when}
	}
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  *time.Time
	}{
		{name: "nothing yet"},
		{name: "released but not evicted (a volume that needs no release)", conds: []metav1.Condition{
			cond(s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, at(0)),
			cond(s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionFalse, at(0)),
		}},
		{name: "evicted after release", conds: []metav1.Condition{
			cond(s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, at(0)),
			cond(s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionTrue, at(time.Minute)),
		}, want: ptrTo(t0.Add(time.Minute))},
		{name: "released after eviction", conds: []metav1.Condition{
			cond(s3gwv1alpha1.ConditionWorkloadEvicted, metav1.ConditionTrue, at(0)),
			cond(s3gwv1alpha1.ConditionAttachmentsReleased, metav1.ConditionTrue, at(2*time.Second)),
		}, want: ptrTo(t0.Add(2 * time.Second))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := releasedSince(tt.conds)
			if tt.want == nil {
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(got).To(HaveValue(BeTemporally("==", *tt.want)))
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
