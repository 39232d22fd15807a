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

package worldmodel

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Targeted cuts strike a second node at the moments the two-step release
// is weakest (docs/design/replica-stop-confirmation.md, "Recommended
// design" item 6): one of the volume's replica nodes loses the control
// plane, so its longhorn-manager can no longer record anything, while its
// replica still reaches the failed node's engine over the data network.
// Random faults almost never land in a window of seconds; these are timed
// from the operator's own writes, so they cost nothing in an episode where
// the operator never removes Longhorn's ticket.

// TargetedCut is one such cut: Delay after the operator's write, healing
// after For, on the candidate node Pick selects (modulo their number).
type TargetedCut struct {
	Delay, For time.Duration
	Pick       int
}

// targetedCutShare is the share of episodes that have each cut.
const targetedCutShare = 0.5

// generateCut draws a cut within the given delay, or nil; it draws the
// same numbers either way.
func generateCut(r *rand.Rand, within time.Duration) *TargetedCut {
	c := &TargetedCut{Delay: between(r, 0, within), For: between(r, time.Minute, 10*time.Minute), Pick: r.IntN(3)}
	if !chance(r, targetedCutShare) {
		return nil
	}
	return c
}

// cutState is what the episode's targeted cuts know: whose csi ticket the
// operator removed, per volume, and which cuts have struck.
type cutState struct {
	ticketRemoved               map[int]string
	ticketStruck, releaseStruck map[int]bool
	// struck are the cuts scheduled, as faults from the episode's start,
	// and when: a baseline whose operator quit before then strikes them
	// at the same moments (attribution.go).
	struck []strike
}

// strike is a targeted cut and when the operator's write scheduled it.
type strike struct {
	at    time.Duration
	fault Fault
}

// ticketRemoved: the operator removed the failed node's csi ticket of the
// volume (the two-step release's first step); the ticket cut may strike.
func (w *World) ticketRemoved(v *Volume, failed string) {
	c := &w.cuts
	if c.ticketRemoved == nil {
		c.ticketRemoved, c.ticketStruck, c.releaseStruck = map[int]string{}, map[int]bool{}, map[int]bool{}
	}
	c.ticketRemoved[v.Index] = failed
	if !c.ticketStruck[v.Index] {
		c.ticketStruck[v.Index] = w.strike(w.sc.TicketCut, v, failed, "replica node cut after the ticket removal")
	}
}

// released: the operator released the volume in Kubernetes. The release
// cut strikes only after a ticket removal: today's one-step release
// never triggers it.
func (w *World) released(v *Volume) {
	c := &w.cuts
	failed, ok := c.ticketRemoved[v.Index]
	if !ok || c.releaseStruck[v.Index] {
		return
	}
	c.releaseStruck[v.Index] = w.strike(w.sc.ReleaseCut, v, failed, "replica node cut after the release")
}

// strike schedules the cut of one of the volume's replica nodes other than
// the failed one; none when there is no such node or the cut would land
// after the faults end (the final reads need a healed world).
func (w *World) strike(c *TargetedCut, v *Volume, failed, why string) bool {
	if c == nil || w.now.Add(c.Delay).Sub(w.start) >= w.sc.Duration {
		return false
	}
	var candidates []int
	for _, r := range v.Replicas {
		i := slices.Index(w.nodes, r.Node)
		if r.Node.Name != failed && !slices.Contains(candidates, i) {
			candidates = append(candidates, i)
		}
	}
	if len(candidates) == 0 {
		return false
	}
	f := Fault{At: w.now.Add(c.Delay).Sub(w.start), Kind: ControlPlaneCut, Nodes: []int{candidates[c.Pick%len(candidates)]}, For: c.For}
	w.cuts.struck = append(w.cuts.struck, strike{at: w.now.Sub(w.start), fault: f})
	w.tracef("fault", "%s: %s in %s", why, f, c.Delay)
	w.schedule(c.Delay, why, func() { f.apply(w) })
	return true
}
