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
	// seen is the heartbeat's values as the controller first read them at t.
	seen := func(hb Heartbeat, t time.Time) Heartbeat {
		hb.Seen = HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: t}
		return hb
	}
	// The kubelet's clock runs 10 minutes behind: its Lease looks expired
	// by the controller's clock, yet the controller just saw it renewed.
	behind := Heartbeat{Ready: ReadyUnknown, ReadySince: at(-1), KubeletPosted: at(-16), LeaseRenewed: at(-10), LeaseDuration: 40 * time.Second}
	// The kubelet's clock runs 10 minutes ahead: its last renewal looks
	// fresh, yet the controller has not seen it change for 5 minutes.
	ahead := Heartbeat{Ready: ReadyUnknown, ReadySince: at(-4), KubeletPosted: at(5), LeaseRenewed: at(5), LeaseDuration: 40 * time.Second}
	tests := []struct {
		name                 string
		hb                   Heartbeat
		silent, lost, noSign bool
	}{
		{
			name:   "dead kubelet: unchanged for longer than its Lease, by the controller's clock",
			hb:     seen(Heartbeat{Ready: ReadyUnknown, ReadySince: at(-9), KubeletPosted: at(-15), LeaseRenewed: at(-10), LeaseDuration: 40 * time.Second}, at(-10)),
			silent: true, lost: true,
		},
		{
			name:   "a kubelet clock behind: a renewal the controller just saw keeps it alive",
			hb:     seen(behind, testNow.Add(-5*time.Second)),
			silent: false, lost: false,
		},
		{
			name:   "a kubelet clock ahead: a renewal time in the future does not keep it alive",
			hb:     seen(ahead, at(-5)),
			silent: true, lost: true,
		},
		{
			name:   "kubelet posting Ready=False: alive",
			hb:     seen(Heartbeat{Ready: ReadyFalse, ReadySince: at(-2), KubeletPosted: at(-2), LeaseRenewed: at(0), LeaseDuration: 40 * time.Second}, testNow.Add(-time.Second)),
			silent: false, lost: false,
		},
		{
			name:   "kubelet that posted Ready=False then died: silent, but not Unknown yet",
			hb:     seen(Heartbeat{Ready: ReadyFalse, ReadySince: at(-5), KubeletPosted: at(-5), LeaseRenewed: at(-3), LeaseDuration: 40 * time.Second}, at(-3)),
			silent: true, lost: false,
		},
		{
			name:   "never read by the controller: nothing is silent yet",
			hb:     Heartbeat{Ready: ReadyUnknown, ReadySince: at(-9), KubeletPosted: at(-15), LeaseRenewed: at(-10), LeaseDuration: 40 * time.Second},
			silent: false, lost: false,
		},
		{
			name:   "no Lease: silent after the kubelet's default Lease duration",
			hb:     seen(Heartbeat{Ready: ReadyUnknown, ReadySince: at(-4), KubeletPosted: at(-5)}, at(-1)),
			silent: true, lost: true,
		},
		{
			name:   "no Lease and no status post (a re-created node): no sign of life",
			hb:     seen(Heartbeat{Ready: ReadyUnknown, ReadySince: at(-4)}, at(-1)),
			silent: true, lost: true, noSign: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.hb.Silent(testNow)).To(Equal(tt.silent))
			g.Expect(tt.hb.Lost(testNow)).To(Equal(tt.lost))
			g.Expect(tt.hb.NoSignOfLife()).To(Equal(tt.noSign))
		})
	}
}

// TestHeartbeatSilentOnControlPlane: kube-controller-manager's Ready=Unknown
// transition a Lease duration after kube-apiserver's stamp on the Lease's
// last write tells the kubelet silent at the first step, whatever the
// kubelet's clock says; without the stamp the controller's own clock decides.
func TestHeartbeatSilentOnControlPlane(t *testing.T) {
	const lease = 40 * time.Second
	unknownSince := testNow.Add(-10 * time.Second)
	// unknown is a node kube-controller-manager marked Unknown at
	// unknownSince, whose Lease kube-apiserver last stored a change to at
	// written; the kubelet's renewTime runs on its own clock.
	unknown := func(written, renewed time.Time) Heartbeat {
		return Heartbeat{Ready: ReadyUnknown, ReadySince: unknownSince, KubeletPosted: renewed, LeaseRenewed: renewed,
			LeaseDuration: lease, LeaseWritten: written}
	}
	// seenChange is hb with the controller having seen its values change at
	// t, under the Ready condition ready since readySince, which it read
	// the previous values under too when underCondition.
	seenChange := func(hb Heartbeat, t time.Time, ready string, readySince time.Time, underCondition bool) Heartbeat {
		hb.Seen = HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: t,
			Witnessed: true, Ready: ready, ReadySince: readySince, ChangedUnderCondition: underCondition}
		return hb
	}
	stale := unknownSince.Add(-lease - 10*time.Second)
	tests := []struct {
		name   string
		hb     Heartbeat
		silent bool
	}{
		{
			name:   "stale Lease: written 50 s before the Unknown transition, never read before: silent at the first pass",
			hb:     unknown(stale, stale),
			silent: true,
		},
		{
			name:   "fresh Lease: written after the Unknown transition (the kubelet came back): alive",
			hb:     unknown(unknownSince.Add(5*time.Second), unknownSince.Add(5*time.Second)),
			silent: false,
		},
		{
			name:   "written a Lease duration and a second before the transition: silent (the stamp is rounded down)",
			hb:     unknown(unknownSince.Add(-lease-time.Second), unknownSince),
			silent: true,
		},
		{
			name: "written exactly a Lease duration before the transition: not yet, the write may have come up to a second " +
				"later than its stamp",
			hb:     unknown(unknownSince.Add(-lease), unknownSince),
			silent: false,
		},
		{
			name: "written shortly before the transition (kube-controller-manager's informer lagged): " +
				"alive until the controller's own clock says otherwise",
			hb:     unknown(unknownSince.Add(-5*time.Second), unknownSince.Add(-5*time.Second)),
			silent: false,
		},
		{
			name:   "a kubelet clock 10 minutes ahead: its renewTime after the transition does not keep a stale Lease alive",
			hb:     unknown(stale, testNow.Add(10*time.Minute)),
			silent: true,
		},
		{
			name:   "a kubelet clock 10 minutes behind: its old-looking renewTime does not make a fresh Lease silent",
			hb:     unknown(unknownSince.Add(5*time.Second), testNow.Add(-10*time.Minute)),
			silent: false,
		},
		{
			name:   "missing managedFields: never read before, nothing tells it silent yet",
			hb:     unknown(time.Time{}, stale),
			silent: false,
		},
		{
			name:   "missing managedFields: the controller's own clock, unchanged for a Lease duration, tells it silent",
			hb:     seenChange(unknown(time.Time{}, stale), testNow.Add(-lease-time.Second), ReadyTrue, testNow.Add(-time.Hour), true),
			silent: true,
		},
		{
			name: "the controller saw a status post since the transition (Ready left Unknown by a stale patch): " +
				"its own clock decides",
			hb:     seenChange(unknown(stale, stale), testNow.Add(-5*time.Second), ReadyUnknown, unknownSince, true),
			silent: false,
		},
		{
			name: "the controller saw the last renewal only after the transition, having read the node Ready before: " +
				"kube-apiserver's stamp places it, silent",
			hb:     seenChange(unknown(stale, stale), testNow.Add(-5*time.Second), ReadyUnknown, unknownSince, false),
			silent: true,
		},
		{
			name: "a kubelet posting Ready=False: the stamp alone does not tell it silent",
			hb: Heartbeat{Ready: ReadyFalse, ReadySince: unknownSince, KubeletPosted: stale, LeaseRenewed: stale,
				LeaseDuration: lease, LeaseWritten: stale},
			silent: false,
		},
		{
			name: "the e2e's compressed Lease (4 s): a transition 5 s after the last write tells it silent",
			hb: Heartbeat{Ready: ReadyUnknown, ReadySince: unknownSince, LeaseRenewed: stale, KubeletPosted: stale,
				LeaseDuration: 4 * time.Second, LeaseWritten: unknownSince.Add(-5 * time.Second)},
			silent: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tt.hb.Silent(testNow)).To(Equal(tt.silent))
			g.Expect(tt.hb.Lost(testNow)).To(Equal(tt.silent))
			if tt.silent {
				g.Expect(tt.hb.SilentAt().After(testNow)).To(BeFalse(), "nothing left to wait for on the controller's clock")
			}
		})
	}
}

func TestHeartbeatSightingNext(t *testing.T) {
	first := testNow.Add(-time.Minute)
	hb := deadKubelet()
	tests := []struct {
		name string
		kept HeartbeatSighting
		read Heartbeat
		want HeartbeatSighting
	}{
		{
			name: "first reading: a sign of life now, not a witnessed change",
			read: hb,
			want: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: testNow,
				Ready: ReadyUnknown, ReadySince: hb.ReadySince},
		},
		{
			name: "unchanged: the sighting stands, however old the kubelet's times look",
			kept: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: first},
			read: hb,
			want: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: first},
		},
		{
			name: "a renewal: witnessed now, with the Ready condition it was read under",
			kept: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed.Add(-10 * time.Second), KubeletPosted: hb.KubeletPosted, At: first},
			read: hb,
			want: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: testNow,
				Witnessed: true, Ready: ReadyUnknown, ReadySince: hb.ReadySince},
		},
		{
			name: "a renewal after the previous values were read under the same Unknown condition: changed under it",
			kept: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed.Add(-10 * time.Second), KubeletPosted: hb.KubeletPosted, At: first,
				Ready: ReadyUnknown, ReadySince: hb.ReadySince},
			read: hb,
			want: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: testNow,
				Witnessed: true, Ready: ReadyUnknown, ReadySince: hb.ReadySince, ChangedUnderCondition: true},
		},
		{
			name: "a renewal after the previous values were read Ready: not known to be after the Unknown transition",
			kept: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed.Add(-10 * time.Second), KubeletPosted: hb.KubeletPosted, At: first,
				Ready: ReadyTrue, ReadySince: hb.ReadySince.Add(-time.Hour)},
			read: hb,
			want: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: testNow,
				Witnessed: true, Ready: ReadyUnknown, ReadySince: hb.ReadySince},
		},
		{
			name: "a renewal time that went backwards (the kubelet's clock was stepped back) is a sign of life too",
			kept: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed.Add(time.Hour), KubeletPosted: hb.KubeletPosted, At: first},
			read: hb,
			want: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: testNow,
				Witnessed: true, Ready: ReadyUnknown, ReadySince: hb.ReadySince},
		},
		{
			name: "a status post alone is a sign of life",
			kept: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted.Add(-time.Minute), At: first},
			read: hb,
			want: HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, KubeletPosted: hb.KubeletPosted, At: testNow,
				Witnessed: true, Ready: ReadyUnknown, ReadySince: hb.ReadySince},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(tt.kept.Next(tt.read, testNow)).To(Equal(tt.want))
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
	// seen records the Lease's renewTime as read ago on the controller's
	// clock, as a change or a first reading; with older, the informer's
	// value is that much older than hb's.
	seen := func(hb Heartbeat, ago time.Duration, witnessed bool, older ...time.Duration) Heartbeat {
		hb.Seen = HeartbeatSighting{LeaseRenewed: hb.LeaseRenewed, At: testNow.Add(-ago), Witnessed: witnessed}
		for _, d := range older {
			hb.Seen.LeaseRenewed = hb.Seen.LeaseRenewed.Add(-d)
		}
		return hb
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
		// Timed on the controller's clock: the node's clock does not count.
		{"seen renewed 10 s ago, node clock an hour behind", seen(renewed(time.Hour), 10*time.Second, true), false},
		{"seen renewed 21 s ago, node clock five minutes ahead", seen(renewed(-5*time.Minute), 21*time.Second, true), true},
		{"a renewal read before the informer timed it", seen(renewed(time.Hour), 25*time.Second, true, time.Second), false},
		// Only a first reading: it ages on the controller's clock too.
		{"first read 21 s ago, node clock five minutes ahead", seen(renewed(-5*time.Minute), 21*time.Second, false), true},
		{"first read 5 s ago, renewTime fresh", seen(renewed(5*time.Second), 5*time.Second, false), false},
		{"first read 5 s ago, renewTime old", seen(renewed(time.Minute), 5*time.Second, false), true},
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
