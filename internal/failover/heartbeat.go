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
	"fmt"
	"time"
)

// Ready condition statuses as the API reports them.
const (
	ReadyTrue    = "True"
	ReadyFalse   = "False"
	ReadyUnknown = "Unknown"
)

// Heartbeat is what the API shows of a node's kubelet: its Ready condition
// and its Lease, and what this controller saw of them (Seen). The kubelet's
// timestamps run on the node's clock, which may be minutes off: they are
// compared only with their own earlier values, never with the controller's
// clock or another machine's. Whether the kubelet went silent is read on
// the control plane's clocks (silentOnControlPlane) or, failing that,
// measured on the controller's clock from when it saw them last change, as
// kube-controller-manager does (pkg/controller/nodelifecycle,
// tryUpdateNodeHealth: probeTimestamp is its own now when the Ready
// heartbeat or the Lease's renewTime changed).
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
	// LeaseWritten is when kube-apiserver last stored a change to the
	// Lease, on its own clock: the latest time among the Lease's
	// managedFields entries. The API server stamps the writing manager's
	// entry with its now on every write that changes a field, a renewal
	// included (k8s.io/apimachinery, pkg/util/managedfields/internal,
	// managedFieldsUpdater.Update), kept to the second, rounded down
	// (metav1.Time). Zero when the Lease carries none: an API server or a
	// cache that strips managedFields.
	LeaseWritten time.Time
	// Seen is what this controller saw of the heartbeat, on its own clock.
	Seen HeartbeatSighting
}

// defaultLeaseDuration is the kubelet's default nodeLeaseDurationSeconds,
// used for a node without a Lease.
const defaultLeaseDuration = 40 * time.Second

func (h Heartbeat) LeaseDurationOrDefault() time.Duration {
	if h.LeaseDuration > 0 {
		return h.LeaseDuration
	}
	return defaultLeaseDuration
}

// NoSignOfLife reports whether the node never showed one: no Lease renewal,
// no status post (a node deleted and re-created under the same name, whose
// kubelet has not started). No timed evidence can be tied to its current
// failure: any fencer's success may be the old node's.
func (h Heartbeat) NoSignOfLife() bool {
	return h.LeaseRenewed.IsZero() && h.KubeletPosted.IsZero()
}

// Silent reports whether the kubelet stopped renewing its Lease and posting
// status for a Lease duration, on a clock the controller trusts: the
// control plane's (silentOnControlPlane) or its own, having seen neither
// change for that long. A kubelet that still renews is alive, whatever a
// fencer claims. Before the first sighting, only the control plane's
// clocks can tell.
func (h Heartbeat) Silent(now time.Time) bool {
	return h.silentOnControlPlane() || h.silentOnOwnClock(now)
}

func (h Heartbeat) silentOnOwnClock(now time.Time) bool {
	return !h.Seen.At.IsZero() && now.Sub(h.Seen.At) > h.LeaseDurationOrDefault()
}

// stampResolution is the resolution of the times the control plane writes
// in metadata and conditions (metav1.Time, whole seconds rounded down): a
// write stamped T happened before T + 1 s.
const stampResolution = time.Second

// silentOnControlPlane reports whether kube-controller-manager marked the
// node Unknown, on its clock, at least a Lease duration after kube-apiserver
// last stored a change to the Lease, on its own: the Lease still carries
// that stamp, so the kubelet has renewed nothing since, and it had been
// silent for a Lease duration when the node-lifecycle controller gave up on
// it. Both are control-plane clocks, trusted alike for a CR's
// creationTimestamp. The stamp, not the node-lifecycle controller's own
// verdict, bounds the silence: that controller counts a renewal when its
// informer delivers it (tryUpdateNodeHealth), and counts none whose
// renewTime went backwards. A change this controller knows came after the
// transition (changedSinceUnknown) leaves the verdict to its own clock.
func (h Heartbeat) silentOnControlPlane() bool {
	return h.Ready == ReadyUnknown && !h.LeaseWritten.IsZero() && !h.changedSinceUnknown() &&
		!h.ReadySince.Before(h.LeaseWritten.Add(stampResolution+h.LeaseDurationOrDefault()))
}

// ControlPlaneSilence says, for the gate's message, why the control plane's
// clocks do not tell the kubelet silent; "" when they cannot tell.
func (h Heartbeat) ControlPlaneSilence() string {
	if h.Ready != ReadyUnknown || h.LeaseWritten.IsZero() || h.changedSinceUnknown() {
		return ""
	}
	return fmt.Sprintf(", and the node went Unknown at %s, less than that after the Lease's last stored renewal (%s)",
		Stamp(h.ReadySince), Stamp(h.LeaseWritten))
}

// SilentAt is when the kubelet counts as silent on the controller's clock
// if nothing changes; zero before the first sighting or when the control
// plane's clocks already tell it silent.
func (h Heartbeat) SilentAt() time.Time {
	if h.Seen.At.IsZero() || h.silentOnControlPlane() {
		return time.Time{}
	}
	return h.Seen.At.Add(h.LeaseDurationOrDefault())
}

// HeartbeatSighting is what this controller saw of a node's heartbeat: the
// values it read last (the kubelet's clock, compared only for equality) and,
// on its own clock, when it first read them. Status keeps it, so a restart
// neither forgets a silence it measured nor mistakes one.
type HeartbeatSighting struct {
	LeaseRenewed, KubeletPosted time.Time
	// At is when this controller first read these values: the latest sign
	// of life it knows of, on its own clock.
	At time.Time
	// Witnessed is true when At is a change it saw, not its first reading:
	// it then saw the kubelet alive at At, while the Ready condition was
	// Ready and ReadySince (the condition at At, first reading included).
	Witnessed  bool
	Ready      string
	ReadySince time.Time
	// ChangedUnderCondition is true when the previous values were first
	// read under that same condition too: the kubelet changed them after
	// the condition began.
	ChangedUnderCondition bool
}

// Next is the sighting after a step read h at now. A first reading counts
// as a sign of life now, as kube-controller-manager assumes for a node it
// has not seen before; any change of the kubelet's values (forwards or
// backwards) is one.
func (s HeartbeatSighting) Next(h Heartbeat, now time.Time) HeartbeatSighting {
	switch {
	case s.At.IsZero():
		return HeartbeatSighting{LeaseRenewed: h.LeaseRenewed, KubeletPosted: h.KubeletPosted, At: now,
			Ready: h.Ready, ReadySince: h.ReadySince}
	case !s.LeaseRenewed.Equal(h.LeaseRenewed) || !s.KubeletPosted.Equal(h.KubeletPosted):
		return HeartbeatSighting{LeaseRenewed: h.LeaseRenewed, KubeletPosted: h.KubeletPosted, At: now,
			Witnessed: true, Ready: h.Ready, ReadySince: h.ReadySince,
			ChangedUnderCondition: s.Ready == h.Ready && s.ReadySince.Equal(h.ReadySince)}
	}
	return s
}

// AliveSinceUnknown reports whether this controller saw the kubelet alive
// while kube-controller-manager had the node Unknown: the transition then
// no longer bounds the node's last sign of life for the evidence created
// after it (aroseDuringFailure). The change may have come before the
// transition, if the controller did not read the node in between: this
// errs towards alive.
func (h Heartbeat) AliveSinceUnknown() bool {
	return h.Seen.Witnessed && h.Seen.Ready == ReadyUnknown && h.Seen.ReadySince.Equal(h.ReadySince)
}

// changedSinceUnknown reports whether this controller knows the kubelet
// changed its values after kube-controller-manager marked the node
// Unknown: it read the earlier values under that Unknown condition already.
// Lease renewals since show in kube-apiserver's stamp (LeaseWritten); this
// catches a status post that left the node Unknown.
func (h Heartbeat) changedSinceUnknown() bool {
	return h.Seen.ChangedUnderCondition && h.Seen.Ready == ReadyUnknown && h.Seen.ReadySince.Equal(h.ReadySince)
}

// Lagging reports whether the kubelet missed two renewals in a row: a live
// kubelet renews its Lease every quarter of its duration, so a Lease not
// renewed for half of it belongs to a node that may have lost the control
// plane, up to half a Lease duration before it expires. A replica there may
// not hear Longhorn's order to stop.
//
// The renewals are timed on the controller's clock (Seen, from the
// manager's Lease informer): renewTime is the node's clock, and one running
// ahead would keep a dead node's Lease looking fresh. A value read but not
// yet timed is a renewal that is arriving now. Until a renewal was seen,
// the Lease lags once it has not changed for half a Lease duration since
// it was first read, or sooner if renewTime already says so.
func (h Heartbeat) Lagging(now time.Time) bool {
	half := h.LeaseDurationOrDefault() / 2
	switch {
	case h.LeaseRenewed.IsZero():
		return true
	case !h.Seen.At.IsZero() && !h.Seen.LeaseRenewed.Equal(h.LeaseRenewed):
		return false
	case h.Seen.Witnessed:
		return now.Sub(h.Seen.At) > half
	case !h.Seen.At.IsZero() && now.Sub(h.Seen.At) > half:
		return true
	default:
		return now.Sub(h.LeaseRenewed) > half
	}
}

// lastRenewal says when the kubelet last renewed, for messages: on the
// controller's clock when it saw it, else renewTime on the node's.
func (h Heartbeat) lastRenewal() string {
	if h.Seen.Witnessed && h.Seen.LeaseRenewed.Equal(h.LeaseRenewed) {
		return "seen renewed at " + Stamp(h.Seen.At) + " (this controller's clock)"
	}
	return "not renewed since " + Stamp(h.LeaseRenewed) + " (its renewTime, on the node's clock)"
}

// Lost reports whether the kubelet is dead as far as the API can tell: the
// node-lifecycle controller marked it Unknown and its Lease expired. A
// kubelet that reports Ready=False itself is alive and will rewrite its own
// volumesInUse.
func (h Heartbeat) Lost(now time.Time) bool {
	return h.Ready == ReadyUnknown && h.Silent(now)
}

// Episode identifies one not-Ready period of a node: the Ready condition as
// the first step of that period saw it.
type Episode struct {
	Ready         string
	ReadySince    time.Time
	KubeletPosted time.Time
	// RecoveredAt is when a step first saw the node Ready again, on the
	// controller's own clock, during or before this episode; zero if never.
	// It is not part of the episode's identity: it says which incident a
	// delegate's fence belongs to (delegateStale).
	RecoveredAt time.Time
	// RecoveredReadySince is the Ready condition's lastTransitionTime that
	// RecoveredAt saw: the kubelet's clock, compared only for equality, so
	// each Ready period is recorded once.
	RecoveredReadySince time.Time
}

// Episode returns the current not-Ready period's identity.
func (h Heartbeat) Episode() Episode {
	return Episode{Ready: h.Ready, ReadySince: h.ReadySince, KubeletPosted: h.KubeletPosted}
}

// Recovery is the episode e with the recovery of a Ready node recorded, or
// nil when this Ready period is recorded already: the first step that sees
// it records its own now, never the kubelet's transition time.
func (e Episode) Recovery(h Heartbeat, now time.Time) *Episode {
	if !e.RecoveredAt.IsZero() && h.ReadySince.Equal(e.RecoveredReadySince) {
		return nil
	}
	e.RecoveredAt, e.RecoveredReadySince = now, h.ReadySince
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

// Stamp formats a time for messages.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
