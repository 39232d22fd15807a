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

import "time"

// Ready condition statuses as the API reports them.
const (
	ReadyTrue    = "True"
	ReadyFalse   = "False"
	ReadyUnknown = "Unknown"
)

// Heartbeat is what the API shows of a node's kubelet: its Ready condition
// and its Lease. It answers two questions the gate asks: when did the node
// last show a sign of life, and has its kubelet gone silent?
type Heartbeat struct {
	// Ready is the Ready condition's status: ReadyTrue, ReadyFalse,
	// ReadyUnknown, or "" when the node has none.
	Ready string
	// ReadySince is the Ready condition's lastTransitionTime.
	ReadySince time.Time
	// KubeletPosted is the Ready condition's lastHeartbeatTime: the
	// kubelet's last status post. The node-lifecycle controller keeps it
	// when it marks the node Unknown.
	KubeletPosted time.Time
	// LeaseRenewed is the node Lease's renewTime; zero when the node has no
	// Lease (no kubelet heartbeats at all).
	LeaseRenewed time.Time
	// LeaseDuration is the Lease's leaseDurationSeconds.
	LeaseDuration time.Duration
}

// LastSignOfLife is the latest moment the API shows the node's kubelet
// alive: its last Lease renewal or status post, and, while it reports
// Ready=False itself, that transition. An Unknown transition is the
// node-lifecycle controller noticing silence, not a sign of life. Evidence
// of fencing counts only if it is newer: anything older may belong to an
// earlier failure the node recovered from. With no heartbeat time at all it
// falls back to the Ready transition, the conservative choice.
func (h Heartbeat) LastSignOfLife() time.Time {
	last := latest(h.LeaseRenewed, h.KubeletPosted)
	if h.Ready != ReadyUnknown || last.IsZero() {
		last = latest(last, h.ReadySince)
	}
	return last
}

// Silent reports whether the kubelet stopped renewing its Lease: the Lease
// expired, or there is none. A kubelet that still renews is alive, whatever
// a fencer claims.
func (h Heartbeat) Silent(now time.Time) bool {
	return h.LeaseRenewed.IsZero() || now.Sub(h.LeaseRenewed) > h.LeaseDuration
}

// Lagging reports whether the kubelet missed two renewals in a row: a live
// kubelet renews its Lease every quarter of its duration, so a Lease not
// renewed for half of it belongs to a node that may have lost the control
// plane, up to half a Lease duration before it expires. A replica there may
// not hear Longhorn's order to stop.
func (h Heartbeat) Lagging(now time.Time) bool {
	return h.LeaseRenewed.IsZero() || now.Sub(h.LeaseRenewed) > h.LeaseDuration/2
}

// Lost reports whether the kubelet is dead as far as the API can tell: the
// node-lifecycle controller marked it Unknown and its Lease expired. A
// kubelet that reports Ready=False itself is alive and will rewrite its own
// volumesInUse.
func (h Heartbeat) Lost(now time.Time) bool {
	return h.Ready == ReadyUnknown && h.Silent(now)
}

// Episode identifies one not-Ready period of a node: the Ready condition as
// the first pass of that period saw it.
type Episode struct {
	Ready         string
	ReadySince    time.Time
	KubeletPosted time.Time
	// RecoveredAt is when a pass last saw the node Ready again (its Ready
	// transition), during or before this episode; zero if never. It is not
	// part of the episode's identity: it says which incident a delegate's
	// fence belongs to (delegateStale).
	RecoveredAt time.Time
}

// Episode returns the current not-Ready period's identity.
func (h Heartbeat) Episode() Episode {
	return Episode{Ready: h.Ready, ReadySince: h.ReadySince, KubeletPosted: h.KubeletPosted}
}

// recovery is the episode e with the recovery of a Ready node recorded, or
// nil when that recovery is recorded already: a pass that sees the node
// Ready records when it became Ready (the API's time, not the pass's).
func (e Episode) recovery(h Heartbeat, now time.Time) *Episode {
	at := h.ReadySince
	if at.IsZero() {
		at = now
	}
	if !at.After(e.RecoveredAt) {
		return nil
	}
	e.RecoveredAt = at
	return &e
}

// Continues reports whether the current Ready condition still belongs to
// the recorded episode e. Any Ready=True period in between changes the
// condition's lastTransitionTime, so an unchanged transition is the same
// episode. The one transition that is not a recovery is the node-lifecycle
// controller turning a kubelet's False into Unknown; it is recognised only
// when the kubelet posted nothing since (a post could have been Ready=True).
// Anything else starts a new episode.
func (e Episode) Continues(h Heartbeat) bool {
	if h.ReadySince.Equal(e.ReadySince) && h.Ready == e.Ready {
		return true
	}
	return e.Ready == ReadyFalse && h.Ready == ReadyUnknown && h.KubeletPosted.Equal(e.KubeletPosted)
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
