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

// Package evidence judges whether the failed node is proven unable to
// write: each evidence source is one descriptor (Source) that says how its
// facts prove the node's current failure fenced, what it does while the
// gate waits for it, and how the protection report imagines it; the gate
// (Evaluate) judges the enabled ones in order. Its adapters, which observe
// the sources and perform their actions, are in internal/fencing.
package evidence

import (
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// Source describes one kind of proof that the failed node cannot write any
// more, through its life in a remediation: judged by the gate, at work
// while the gate is closed, told of NHC's time-out, imagined by the
// protection report. Its adapter (internal/fencing) observes it, performs
// its actions and cleans up after it.
type Source struct {
	// Name names the source in messages, status and the fencing_blocked
	// metric.
	Name string
	// Summary says, in a line, what the source accepts as proof (the docs'
	// description).
	Summary string
	// Field is the spec.fencing field that enables it, and EnabledCEL the
	// same test in CEL on spec.fencing: the CRD refuses a spec that enables
	// no source (make generate writes the rule).
	Field, EnabledCEL string
	// Enabled reports whether the spec counts the source.
	Enabled func(s3gwv1alpha1.FencingSpec) bool
	// Judge records in v, for the node's current failure, what of the
	// observed facts proves the node fenced and what is missing.
	Judge func(s failover.State, v *Verdict)
	// ProvesShutdown is true when the source's evidence shows the node is
	// off (a taint, a fencer's success), not only its storage cut off.
	ProvesShutdown bool
	// MayStillProve reports, while the source proves nothing, whether it
	// may still come to for the node's current failure without anyone's
	// hand: a fencer yet to report, Longhorn yet to see the node down. nil
	// means never (only an admin adds an out-of-service taint).
	MayStillProve func(s failover.State) bool
	// Failed says how the source gave up for the node's current failure;
	// empty while it has not, and nil for a source that cannot. The
	// remediation fails once no other source may still prove the node
	// fenced, so NodeHealthCheck escalates at once.
	Failed func(s failover.State) string
	// FailureReason is the condition reason the remediation fails with
	// when the source gave up (Failed).
	FailureReason string
	// Working is what the source does while the gate is closed to come to
	// prove the node fenced (a delegate creates its fencer); nil for a
	// source that only waits.
	Working func(s failover.State) Work
	// TimedOut are the actions that step NHC's time-out on to what the
	// source started; nil for a source that starts nothing.
	TimedOut func(s failover.State) []failover.Action
	// Imagine sets on f, the failure the protection report imagines for
	// s's node, what the source would show once it did its part (a fencer
	// reports success now), as far as s shows it can.
	Imagine func(s failover.State, f *failover.State)
	// NeverImagined says why the protection report never counts the source
	// (an admin's hand); empty for the sources it imagines.
	NeverImagined string
	// Needs are the API rights its adapter uses; test/manifests checks the
	// generated role grants them.
	Needs []failover.Need
}

// Work is what a source does while the gate waits for it.
type Work struct {
	// Actions are its writes.
	Actions []failover.Action
	// Reason, when set, is the reason the wait is reported with: the
	// source is why it lasts (its fencer cannot be used, has not started,
	// or gave up), and Message says so.
	Reason, Message string
	// WakeAt is when the work's state changes with nothing to announce
	// it; zero if never.
	WakeAt time.Time
}

// Sources are the evidence sources, in the order the gate judges them.
var Sources = []Source{outOfServiceTaint, storageIsolation, remediators, delegate}

// Enabled are the sources the spec counts, in the gate's order.
func Enabled(f s3gwv1alpha1.FencingSpec) []Source {
	var out []Source
	for _, source := range Sources {
		if source.Enabled(f) {
			out = append(out, source)
		}
	}
	return out
}

// Verdict collects, source by source, what proves the node fenced and
// what is missing.
type Verdict struct {
	evidence, missing, sources []string
}

// proves records evidence that proves the node fenced.
func (v *Verdict) proves(evidence string) { v.evidence = append(v.evidence, evidence) }

// lacks says what is missing.
func (v *Verdict) lacks(why string) { v.missing = append(v.missing, why) }

// blocks names a source that proves nothing, for the fencing_blocked metric.
func (v *Verdict) blocks(source string) { v.sources = append(v.sources, source) }

// check records a source that proves the node fenced when why is empty,
// else what is missing.
func (v *Verdict) check(evidence, why, source string) {
	if why == "" {
		v.proves(evidence)
		return
	}
	v.lacks(why)
	v.blocks(source)
}
