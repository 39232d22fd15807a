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

package step

import (
	"fmt"
	"strings"
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// releaseDeadlinePassed reports whether eviction and release have taken
// longer than spec.releaseTimeout since the gate was found open
// (FencedSince). Without an open gate there is no deadline.
func releaseDeadlinePassed(o failover.State) bool {
	return o.FencedSince != nil && o.Now.Sub(*o.FencedSince) > o.Spec.ReleaseTimeoutOrDefault()
}

// nextChange is the earliest moment after now at which the same world
// yields another decision with nothing to announce it: the failed node's
// Lease expiring (evidence becomes trusted, the kubelet counts as lost), or
// the release or replacement deadline passing. Zero if none is ahead.
func nextChange(o failover.State) time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if t.After(o.Now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if o.Node != nil {
		consider(o.Node.Heartbeat.SilentAt())
	}
	if o.FencedSince != nil {
		consider(o.FencedSince.Add(o.Spec.ReleaseTimeoutOrDefault()))
	}
	if o.ReleasedSince != nil {
		consider(o.ReleasedSince.Add(o.Spec.ReplacementTimeoutOrDefault()))
	}
	return next
}

// earliest is the earlier of two moments, a zero one being never.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// releaseTimedOut turns a decision still evicting or releasing past the
// deadline into Succeeded=False naming exactly what blocks the move
// (release.Blockers). The decision's writes stay, so a step that could
// still make progress does.
func releaseTimedOut(o failover.State, d Decision) Decision {
	pods, holders := release.Blockers(o)
	reason := s3gwv1alpha1.ReasonReleaseTimedOut
	if len(pods) > 0 {
		// A pod waits for its volumes' first release step too: name both.
		reason, holders = s3gwv1alpha1.ReasonEvictionTimedOut, append(pods, holders...)
	}
	d.Phase, d.Wait = s3gwv1alpha1.PhaseFailed, WaitAfterFailure
	d.Reason = reason
	d.Message = fmt.Sprintf("Not done %s after the gate opened: %s", o.Spec.ReleaseTimeoutOrDefault(), strings.Join(holders, "; "))
	// What blocks the move is named here, in full; the facts show as they are.
	d.Blocks = nil
	return d
}
