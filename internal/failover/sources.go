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
	corev1 "k8s.io/api/core/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// EvidenceSource describes one kind of proof that the failed node cannot
// write any more. The gate judges the enabled sources in Sources' order,
// the protection report imagines each one doing its part, and a release
// strategy that needs the node off asks whether the source that held
// proves it. Its adapter (internal/fencing) observes it.
type EvidenceSource struct {
	// Name names the source in messages, status and the fencing_blocked
	// metric.
	Name string
	// Enabled reports whether the spec counts the source.
	Enabled func(s3gwv1alpha1.FencingSpec) bool
	// Judge records in v, for the node's current failure, what of the
	// observed facts proves the node fenced and what is missing.
	Judge func(o Observation, v *Verdict)
	// Imagine sets on f, the failure the protection report imagines for
	// o's node, what the source would show once it did its part (a fencer
	// reports success now), as far as o shows it can.
	Imagine func(o Observation, f *Observation)
	// NeverImagined says why the protection report never counts the source
	// (an admin's hand); empty for the sources it imagines.
	NeverImagined string
	// ProvesShutdown is true when the source's evidence shows the node is
	// off (a taint, a fencer's success), not only its storage cut off.
	ProvesShutdown bool
	// MayStillHold reports, while the source does not hold, whether it may
	// still come to hold for the node's current failure without anyone's
	// hand: a fencer yet to report, Longhorn yet to see the node down. nil
	// means never (only an admin adds an out-of-service taint). A failed
	// delegate ends the remediation once no other source may
	// (FailedDelegate).
	MayStillHold func(o Observation) bool
	// Needs are the API rights its adapter uses; test/manifests checks the
	// generated role grants them.
	Needs []Need
}

// Sources are the evidence sources, in the order the gate judges them.
var Sources = []EvidenceSource{outOfServiceTaint, storageIsolation, remediators, delegate}

// Evidence is what the evidence sources observed, beyond the node itself
// (its out-of-service taint is Node.OutOfServiceTaint).
type Evidence struct {
	// Remediators are CRs of the kinds listed in spec.fencing.remediators
	// found for the node.
	Remediators []RemediatorCR
	// InvalidRemediators says, by kind, why a listed remediator kind cannot
	// prove anything (its apiVersion does not parse, it is not served).
	InvalidRemediators map[string]string
	// Delegate is the fencing CR this remediation created, nil if none.
	Delegate *RemediatorCR
	// DelegateError explains why the delegate cannot be used, if it cannot.
	DelegateError string
	// DelegateRef references Delegate, for status.
	DelegateRef *corev1.ObjectReference
	// OtherFencers are, while the delegate does not exist, the CRs of its
	// kind for the node that this remediation did not create.
	OtherFencers []RemediatorCR
	// LonghornNode is the failed node's Longhorn Node: storage isolation
	// needs it down (LonghornNode.Down).
	LonghornNode LonghornNode
}

// Verdict collects, source by source, what proves the node fenced and
// what is missing.
type Verdict struct {
	evidence, missing, sources []string
}

// holds records evidence that proves the node fenced.
func (v *Verdict) holds(evidence string) { v.evidence = append(v.evidence, evidence) }

// lacks says what is missing.
func (v *Verdict) lacks(why string) { v.missing = append(v.missing, why) }

// blocks names a source that does not hold, for the fencing_blocked metric.
func (v *Verdict) blocks(source string) { v.sources = append(v.sources, source) }

// check records a source that holds when why is empty, else what is missing.
func (v *Verdict) check(evidence, why, source string) {
	if why == "" {
		v.holds(evidence)
		return
	}
	v.lacks(why)
	v.blocks(source)
}
