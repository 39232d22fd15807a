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
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

func imStatus(state string, replicas ...string) longhorn.InstanceManagerStatus {
	s := longhorn.InstanceManagerStatus{CurrentState: state}
	for _, r := range replicas {
		if s.InstanceReplicas == nil {
			s.InstanceReplicas = map[string]longhorn.InstanceProcess{}
		}
		s.InstanceReplicas[r] = longhorn.InstanceProcess{Status: longhorn.InstanceProcessStatus{State: "running"}}
	}
	return s
}

func TestInstanceManagerStatus(t *testing.T) {
	running, unknown := longhorn.InstanceManagerRunning, longhorn.InstanceManagerUnknown
	for _, tc := range []struct {
		name            string
		cur             longhorn.InstanceManagerStatus
		down, reachable bool
		running         []string
		want            longhorn.InstanceManagerStatus
		wantWrite       bool
	}{
		{
			name: "new on a live node: running with its replicas",
			cur:  imStatus(""), reachable: true, running: []string{"r-1", "r-2"},
			want: imStatus(running, "r-1", "r-2"), wantWrite: true,
		},
		{
			name: "live node: the list follows the running replicas",
			cur:  imStatus(running, "r-1", "r-2"), reachable: true, running: []string{"r-2"},
			want: imStatus(running, "r-2"), wantWrite: true,
		},
		{
			name: "live node with nothing running: empty list",
			cur:  imStatus(running, "r-1"), reachable: true,
			want: imStatus(running), wantWrite: true,
		},
		{
			name: "lost but not counted down: not written, stays stale",
			cur:  imStatus(running, "r-1"), running: nil,
			want: imStatus(running, "r-1"),
		},
		{
			name: "counted down: unknown, list kept",
			cur:  imStatus(running, "r-1"), down: true,
			want: imStatus(unknown, "r-1"), wantWrite: true,
		},
		{
			name: "counted down while its kubelet is back: still unknown",
			cur:  imStatus(unknown, "r-1"), down: true, reachable: true, running: []string{"r-1"},
			want: imStatus(unknown, "r-1"), wantWrite: true,
		},
		{
			name: "back: running with the fresh list",
			cur:  imStatus(unknown, "r-1"), reachable: true,
			want: imStatus(running), wantWrite: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.cur.DeepCopy()
			got, write := instanceManagerStatus(tc.cur, tc.down, tc.reachable, tc.running)
			if write != tc.wantWrite || !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("instanceManagerStatus() = %+v write %v, want %+v write %v", got, write, tc.want, tc.wantWrite)
			}
			if !equality.Semantic.DeepEqual(*before, tc.cur) {
				t.Errorf("instanceManagerStatus() changed its input to %+v", tc.cur)
			}
		})
	}
}

func TestInstanceManagerName(t *testing.T) {
	a, b := instanceManagerName("node-a"), instanceManagerName("node-b")
	if !regexp.MustCompile(`^instance-manager-[0-9a-f]{32}$`).MatchString(a) {
		t.Errorf("instanceManagerName() = %q, want instance-manager- and 32 hex digits", a)
	}
	if a == b || a != instanceManagerName("node-a") {
		t.Errorf("names %q, %q: want one stable name per node", a, b)
	}
	if got := instanceManagerLabels("node-a")[longhorn.InstanceManagerNodeLabel]; got != "node-a" {
		t.Errorf("node label = %q", got)
	}
}
