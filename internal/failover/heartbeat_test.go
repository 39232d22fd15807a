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

package failover

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestHeartbeat(t *testing.T) {
	at := func(minutes int) time.Time { return testNow.Add(time.Duration(minutes) * time.Minute) }
	tests := []struct {
		name       string
		hb         Heartbeat
		signOfLife time.Time
		silent     bool
		lost       bool
	}{
		{
			name:       "dead kubelet: the last renewal, not the Unknown transition",
			hb:         Heartbeat{Ready: ReadyUnknown, ReadySince: at(-9), KubeletPosted: at(-15), LeaseRenewed: at(-10), LeaseDuration: 40 * time.Second},
			signOfLife: at(-10), silent: true, lost: true,
		},
		{
			name:       "kubelet posting Ready=False: alive at its transition and renewals",
			hb:         Heartbeat{Ready: ReadyFalse, ReadySince: at(-2), KubeletPosted: at(-2), LeaseRenewed: at(0), LeaseDuration: 40 * time.Second},
			signOfLife: at(0), silent: false, lost: false,
		},
		{
			name:       "kubelet that posted Ready=False then died: silent, but not Unknown yet",
			hb:         Heartbeat{Ready: ReadyFalse, ReadySince: at(-5), KubeletPosted: at(-5), LeaseRenewed: at(-3), LeaseDuration: 40 * time.Second},
			signOfLife: at(-3), silent: true, lost: false,
		},
		{
			name:       "no Lease: silent; a Ready=Unknown with no heartbeat time falls back to its transition",
			hb:         Heartbeat{Ready: ReadyUnknown, ReadySince: at(-4)},
			signOfLife: at(-4), silent: true, lost: true,
		},
		{
			name:       "an unexpired Lease keeps an Unknown node alive",
			hb:         Heartbeat{Ready: ReadyUnknown, ReadySince: at(-1), KubeletPosted: at(-6), LeaseRenewed: testNow.Add(-30 * time.Second), LeaseDuration: 40 * time.Second},
			signOfLife: testNow.Add(-30 * time.Second), silent: false, lost: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.hb.LastSignOfLife()).To(Equal(tt.signOfLife))
			g.Expect(tt.hb.Silent(testNow)).To(Equal(tt.silent))
			g.Expect(tt.hb.Lost(testNow)).To(Equal(tt.lost))
		})
	}
}

func TestEpisodeContinues(t *testing.T) {
	falseSince := testNow.Add(-10 * time.Minute)
	recorded := Episode{Ready: ReadyFalse, ReadySince: falseSince, KubeletPosted: falseSince}
	tests := []struct {
		name      string
		now       Heartbeat
		continues bool
	}{
		{
			name:      "same condition",
			now:       Heartbeat{Ready: ReadyFalse, ReadySince: falseSince, KubeletPosted: falseSince.Add(5 * time.Minute)},
			continues: true,
		},
		{
			name:      "the node-lifecycle controller turned False into Unknown; no post since",
			now:       Heartbeat{Ready: ReadyUnknown, ReadySince: testNow.Add(-time.Minute), KubeletPosted: falseSince},
			continues: true,
		},
		{
			name: "Unknown after a post the kubelet made since: it may have been Ready=True",
			now:  Heartbeat{Ready: ReadyUnknown, ReadySince: testNow.Add(-time.Minute), KubeletPosted: testNow.Add(-3 * time.Minute)},
		},
		{
			name: "a new False transition: the node was Ready in between",
			now:  Heartbeat{Ready: ReadyFalse, ReadySince: testNow.Add(-time.Minute), KubeletPosted: testNow.Add(-time.Minute)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(recorded.Continues(tt.now)).To(Equal(tt.continues))
		})
	}
	t.Run("an Unknown episode continues only with the same transition", func(t *testing.T) {
		g := NewWithT(t)
		unknown := deadKubelet()
		g.Expect(unknown.Episode().Continues(unknown)).To(BeTrue())
		later := unknown
		later.ReadySince = later.ReadySince.Add(time.Hour)
		g.Expect(unknown.Episode().Continues(later)).To(BeFalse())
	})
}

// TestHeartbeatLagging: a replica node's kubelet that missed two renewals
// is suspect long before its Lease expires.
func TestHeartbeatLagging(t *testing.T) {
	renewed := func(ago time.Duration) Heartbeat {
		return Heartbeat{Ready: ReadyTrue, LeaseRenewed: testNow.Add(-ago), LeaseDuration: 40 * time.Second}
	}
	tests := []struct {
		name    string
		hb      Heartbeat
		lagging bool
	}{
		{"renewed on time (every 10 s)", renewed(10 * time.Second), false},
		{"one renewal late", renewed(19 * time.Second), false},
		{"two renewals missed, Lease not yet expired", renewed(21 * time.Second), true},
		{"expired", renewed(41 * time.Second), true},
		{"no Lease", Heartbeat{Ready: ReadyTrue}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.hb.Lagging(testNow)).To(Equal(tt.lagging))
			if tt.hb.Silent(testNow) {
				g.Expect(tt.lagging).To(BeTrue(), "an expired Lease lags too")
			}
		})
	}
}
