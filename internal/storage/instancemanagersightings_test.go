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

package storage

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

func TestInstanceManagerSightings(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	im := func(uid, rv, state string) *longhorn.InstanceManager {
		return &longhorn.InstanceManager{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: rv},
			Status: longhorn.InstanceManagerStatus{CurrentState: state}}
	}
	type step struct {
		after time.Duration // clock advance before the observation
		im    *longhorn.InstanceManager
	}
	tests := []struct {
		name  string
		steps []step
		read  *longhorn.InstanceManager
		want  time.Duration // since start; -1: zero
	}{
		{"running since first seen", []step{{0, im("a", "1", "running")}}, im("a", "1", "running"), 0},
		{"a later running version keeps the start", []step{{0, im("a", "1", "running")}, {7 * time.Second, im("a", "2", "running")}},
			im("a", "2", "running"), 0},
		{"starting in between starts over", []step{{0, im("a", "1", "running")}, {time.Second, im("a", "2", "starting")},
			{2 * time.Second, im("a", "3", "running")}}, im("a", "3", "running"), 3 * time.Second},
		{"unknown in between starts over", []step{{0, im("a", "1", "running")}, {time.Second, im("a", "2", "unknown")},
			{time.Second, im("a", "3", "running")}}, im("a", "3", "running"), 2 * time.Second},
		{"a version the informer has not delivered counts as unseen", []step{{0, im("a", "1", "running")}},
			im("a", "2", "running"), -1},
		{"not running", []step{{0, im("a", "1", "starting")}}, im("a", "1", "starting"), -1},
		{"another UID under the name starts over", []step{{0, im("a", "1", "running")}, {time.Second, im("b", "2", "running")}},
			im("b", "2", "running"), time.Second},
		{"never seen", nil, im("a", "1", "running"), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(start)
			s := NewInstanceManagerSightings(clk)
			for _, st := range tt.steps {
				clk.SetTime(clk.Now().Add(st.after))
				s.Observe(st.im)
			}
			want := time.Time{}
			if tt.want >= 0 {
				want = start.Add(tt.want)
			}
			if got := s.RunningSince(tt.read); !got.Equal(want) {
				t.Errorf("RunningSince = %v, want %v", got, want)
			}
		})
	}
	var none *InstanceManagerSightings
	if !none.RunningSince(im("a", "1", "running")).IsZero() {
		t.Error("a nil record has seen nothing")
	}
}
