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

package evidence

import (
	"time"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// Evidence is ordered against the node's last sign of life on a clock the
// gate trusts, never on a kubelet's, fencer's or admin's: the control
// plane's (a CR created after the node went Unknown) or the controller's
// own (the evidence seen pending after the heartbeat was last seen
// changing), kept in memory across restarts
// (docs/safety.md#clocks-the-gate-trusts).

// NextSightings is the sightings after the step that observed o, from those
// the memory kept: each fencer CR for the node and the out-of-service taint,
// pending or proving, and when a CR was first seen failed. CRs no longer
// there are forgotten. A pending sighting already made since the node's
// heartbeat sighting is kept as it is: it proves all a later one would, and
// the memory is not rewritten every step.
func NextSightings(kept []failover.EvidenceSighting, o failover.State) []failover.EvidenceSighting {
	if o.Node == nil {
		return kept
	}
	now, heartbeat := o.Now, o.Node.Heartbeat.Seen.At
	previous := map[string]failover.EvidenceSighting{}
	for _, s := range kept {
		previous[s.Name] = s
	}
	var out []failover.EvidenceSighting
	see := func(name string, proves, failed bool) {
		s, seen := previous[name]
		if !seen {
			s = failover.EvidenceSighting{Name: name}
		}
		switch {
		case !failed:
			s.FailedAt = nil
		case s.FailedAt == nil:
			s.FailedAt = &now
		}
		switch {
		case !proves && (s.PendingAt == nil || s.PendingAt.Before(heartbeat)):
			s.PendingAt, s.ProvenAt = &now, nil
		case !proves:
			s.ProvenAt = nil
		case s.ProvenAt == nil:
			s.ProvenAt = &now
		}
		out = append(out, s)
	}
	see(failover.TaintSighting, o.Node.OutOfServiceTaint.Foreign(), false)
	e := o.Evidence
	crs := append(append([]failover.RemediatorCR(nil), e.Remediators...), e.OtherFencers...)
	if e.Delegate != nil {
		crs = append(crs, *e.Delegate)
	}
	for _, cr := range crs {
		if !contains(out, failover.CRSighting(cr)) {
			see(failover.CRSighting(cr), cr.Fenced, cr.Failure != "")
		}
	}
	return out
}

// SawCreated is the sightings after this controller created the fencer's CR
// cr (its delegate) in the step that read the world at now: the CR did not
// exist then, so it proved nothing yet after the heartbeat that step read,
// on the controller's own clock. The CR's creationTimestamp is not needed
// to tie it to the failure, nor is a later step seeing it pending before
// the fencer reports.
func SawCreated(sightings []failover.EvidenceSighting, cr failover.RemediatorCR, now time.Time) []failover.EvidenceSighting {
	name := failover.CRSighting(cr)
	if contains(sightings, name) {
		return sightings
	}
	return append(append([]failover.EvidenceSighting(nil), sightings...), failover.EvidenceSighting{Name: name, PendingAt: &now})
}

func contains(sightings []failover.EvidenceSighting, name string) bool {
	for _, s := range sightings {
		if s.Name == name {
			return true
		}
	}
	return false
}

// aroseDuringFailure reports whether the named evidence, created at
// createdAt by kube-apiserver's clock (nil when it has no creation time of
// its own, like a taint), arose after the node's last sign of life, judged
// on a clock the controller trusts (see above).
func aroseDuringFailure(o failover.State, name string, createdAt *time.Time) bool {
	hb := o.Node.Heartbeat
	if pending := o.Sighting(name).PendingAt; pending != nil && !hb.Seen.At.IsZero() && !pending.Before(hb.Seen.At) {
		return true
	}
	return createdAt != nil && hb.Ready == failover.ReadyUnknown && createdAt.After(hb.ReadySince) && !hb.AliveSinceUnknown()
}
