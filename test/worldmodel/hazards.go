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
	"fmt"
	"slices"
	"strings"
)

// Hazards are parts of the world that an episode may have or not. Every
// episode draws them; a hazard that is off is then taken out (every clock
// synchronised, every revision counter enabled, no cache lag), so that the
// same episode can be replayed with and without it.
type Hazards struct {
	// RevisionCounterDisabled: volumes draw spec.revisionCounterDisabled
	// (60 % disabled, the CSI default); off, every volume has it enabled.
	RevisionCounterDisabled bool
	// ClockSkew: machines' clocks drift up to maxSkew apart.
	ClockSkew bool
	// InformerLag: the controller's cache trails the API server.
	InformerLag bool
	// CutAfterTicket: in half the episodes, a replica node other than the
	// failed one is cut from the control plane 0-5 s after the operator
	// removes the failed node's csi ticket (cuts.go).
	CutAfterTicket bool
	// CutAfterRelease: in half the episodes, one is cut 0-5 s after the
	// Kubernetes release that follows a ticket removal.
	CutAfterRelease bool
	// SNR: in half the episodes, the NodeHealthCheck escalates to Self
	// Node Remediation too, before or after our step (snr.go). Its manager
	// removes out-of-service taints it did not add while the node may
	// still be down.
	SNR bool
	// NodeRecreated: in half the episodes an admin deletes a NotReady
	// Node and re-creates it from its saved manifest (recreate.go).
	NodeRecreated bool
	// TaintHandover: in half the episodes, an admin puts back an
	// out-of-service taint that FAR or SNR removed from a node still off
	// (retaint.go).
	TaintHandover bool
	// NeighbourSettings: each episode draws each of the neighbours'
	// settings, its upstream default or the other value (neighbours.go);
	// off, every episode runs the upstream defaults.
	NeighbourSettings bool
}

// allHazards are every hazard the model has.
var allHazards = Hazards{RevisionCounterDisabled: true, ClockSkew: true, InformerLag: true,
	CutAfterTicket: true, CutAfterRelease: true, SNR: true, NodeRecreated: true, TaintHandover: true,
	NeighbourSettings: true}

// defaultHazards are the hazards of TestWorldModel, the fixed-seed run of
// make test, and of the mutation runs: all but the targeted cuts, SNR (a
// neighbour some clusters have; the mutation of the taint owner record
// runs with it and the taint handover, Mutation.Hazards) and the node
// re-creation (run them with WORLDMODEL_HAZARDS naming them). Volumes with the revision counter
// disabled are refused (failover.VolumeRules); the gate reads only clocks
// it trusts (issue #16 item 3b), so skewed machines must not cost a write
// either.
//
// The targeted cuts aim a second node failure at the second after the
// operator's Longhorn write, in half the episodes: they test the release in
// two steps (docs/safety.md), and with them the model still finds the
// residual that no rule of the operator closes while the old engine may
// still run (storage isolation): a replica node cut in that second keeps
// the old engine's last writes, and a release the operator does not make
// (the failed node's return, Kubernetes' taint eviction, the same replica
// node failing again before the new engine starts) leaves it out. Run them
// with WORLDMODEL_HAZARDS=all (SNR included) or by name; the mutations of
// the two-step rules name them (Mutation.Hazards).
var defaultHazards = Hazards{RevisionCounterDisabled: true, ClockSkew: true, InformerLag: true}

// hazard names one field of Hazards.
type hazard struct {
	name  string
	field func(*Hazards) *bool
}

// hazardNames are the names WORLDMODEL_HAZARDS takes.
var hazardNames = []hazard{
	{"revision-counter", func(h *Hazards) *bool { return &h.RevisionCounterDisabled }},
	{"clock-skew", func(h *Hazards) *bool { return &h.ClockSkew }},
	{"informer-lag", func(h *Hazards) *bool { return &h.InformerLag }},
	{"cut-after-ticket", func(h *Hazards) *bool { return &h.CutAfterTicket }},
	{"cut-after-release", func(h *Hazards) *bool { return &h.CutAfterRelease }},
	{"snr", func(h *Hazards) *bool { return &h.SNR }},
	{"node-recreated", func(h *Hazards) *bool { return &h.NodeRecreated }},
	{"taint-handover", func(h *Hazards) *bool { return &h.TaintHandover }},
	{"neighbour-settings", func(h *Hazards) *bool { return &h.NeighbourSettings }},
}

// parseHazards reads "none", "all" or a comma-separated list of names.
func parseHazards(s string) (Hazards, error) {
	var h Hazards
	switch s {
	case "none":
		return h, nil
	case "all":
		return allHazards, nil
	}
	for _, name := range strings.Split(s, ",") {
		i := slices.IndexFunc(hazardNames, func(n hazard) bool { return n.name == name })
		if i < 0 {
			return h, fmt.Errorf("unknown hazard %q (want none, all, or a list of %s)", name, hazardList())
		}
		*hazardNames[i].field(&h) = true
	}
	return h, nil
}

func hazardList() string {
	names := make([]string, len(hazardNames))
	for i, n := range hazardNames {
		names[i] = n.name
	}
	return strings.Join(names, ",")
}

func (h Hazards) String() string {
	var on []string
	for _, n := range hazardNames {
		if *n.field(&h) {
			on = append(on, n.name)
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ",")
}

// without is h with one hazard off.
func (h Hazards) without(name string) Hazards {
	for _, n := range hazardNames {
		if n.name == name {
			*n.field(&h) = false
		}
	}
	return h
}

// apply takes the hazards that are off out of a drawn scenario.
func (h Hazards) apply(sc *Scenario) {
	if !h.ClockSkew {
		sc.Clocks = sc.Clocks.synchronised()
	}
	if !h.RevisionCounterDisabled {
		for i := range sc.Instances {
			sc.Instances[i].RevisionCounterDisabled = false
		}
	}
	if !h.InformerLag {
		sc.CacheLag = 0
	}
	if !h.CutAfterTicket {
		sc.TicketCut = nil
	}
	if !h.CutAfterRelease {
		sc.ReleaseCut = nil
	}
	if !h.SNR {
		sc.SNR = nil
	} else if sc.SNR != nil {
		// With SNR the NodeHealthCheck escalates, and the admin's own CR is
		// drawn for a classic one only (generateManual).
		sc.Manual = nil
	}
	if !h.NodeRecreated {
		sc.Recreate = nil
	}
	if !h.TaintHandover {
		sc.Retaint = nil
	}
	if !h.NeighbourSettings {
		sc.Neighbours = NeighbourSettings{}
	}
}
