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
	"strings"
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// releaseDeadlinePassed reports whether eviction and release have taken
// longer than spec.releaseTimeout since the gate opened (the Fenced
// condition turned True). Without an open gate there is no deadline.
func releaseDeadlinePassed(o Observation) bool {
	return o.FencedSince != nil && o.Now.Sub(*o.FencedSince) > o.Spec.ReleaseTimeoutOrDefault()
}

// nextChange is the earliest moment after now at which the same world
// yields another decision with nothing to announce it: the failed node's
// Lease expiring (evidence becomes trusted, the kubelet counts as lost), or
// the release or replacement deadline passing. Zero if none is ahead.
func nextChange(o Observation) time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if t.After(o.Now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if o.Node != nil {
		consider(o.Node.Heartbeat.silentAt())
	}
	if o.FencedSince != nil {
		consider(o.FencedSince.Add(o.Spec.ReleaseTimeoutOrDefault()))
	}
	if o.ReleasedSince != nil {
		consider(o.ReleasedSince.Add(o.Spec.ReplacementTimeoutOrDefault()))
	}
	return next
}

// releaseTimedOut turns a decision still evicting or releasing past the
// deadline into Succeeded=False naming exactly what holds: the pods still
// in the API with their finalizers, and for each volume its Longhorn
// tickets, its VolumeAttachments (with the finalizers holding a deletion)
// and a kubelet's volumesInUse. The decision's writes stay, so a pass that
// could still make progress does.
func releaseTimedOut(o Observation, d Decision) Decision {
	reason, holders := s3gwv1alpha1.ReasonReleaseTimedOut, releaseHolders(o)
	if pods := podHolders(o); len(pods) > 0 {
		// A pod waits for its volumes' first release step too: name both.
		reason, holders = s3gwv1alpha1.ReasonEvictionTimedOut, append(pods, holders...)
	}
	d.Phase, d.Wait = s3gwv1alpha1.PhaseFailed, WaitAfterFailure
	d.Reason = reason
	d.Message = fmt.Sprintf("Not done %s after the gate opened: %s", o.Spec.ReleaseTimeoutOrDefault(), strings.Join(holders, "; "))
	// What holds is named here, in full; the facts show as they are.
	d.Holds = nil
	return d
}

func podHolders(o Observation) []string {
	var out []string
	for _, t := range o.Targets {
		switch {
		case !t.PodPresent:
		case len(t.Finalizers) > 0:
			out = append(out, fmt.Sprintf("pod %s/%s is held by finalizers %s", t.Namespace, t.Name, strings.Join(t.Finalizers, ", ")))
		default:
			out = append(out, fmt.Sprintf("pod %s/%s is still in the API", t.Namespace, t.Name))
		}
	}
	return out
}

func releaseHolders(o Observation) []string {
	var out []string
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if !v.ToRelease() {
				continue
			}
			var why []string
			for _, ticket := range v.Tickets {
				why = append(why, fmt.Sprintf("Longhorn ticket %s (type %s)", ticket.ID, ticket.Type))
			}
			for _, va := range v.Attachments {
				switch {
				case va.Deleting && len(va.Finalizers) > 0:
					why = append(why, fmt.Sprintf("VolumeAttachment %s being deleted, held by finalizers %s", va.Name, strings.Join(va.Finalizers, ", ")))
				case va.Deleting:
					why = append(why, fmt.Sprintf("VolumeAttachment %s being deleted", va.Name))
				default:
					why = append(why, fmt.Sprintf("VolumeAttachment %s", va.Name))
				}
			}
			if v.InUseOnNode {
				why = append(why, fmt.Sprintf("node %s's status.volumesInUse", o.Node.Name))
			}
			if stops := replicaStopHolders(o, v); stops != "" {
				why = append(why, stops)
			}
			out = append(out, fmt.Sprintf("volume %s is held by %s", v.LonghornVolume, strings.Join(why, ", ")))
		}
	}
	return out
}
