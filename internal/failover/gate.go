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

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Evidence names recorded in status.fencingEvidence.
const (
	EvidenceOutOfServiceTaint = "OutOfServiceTaint"
	EvidenceStorageIsolation  = "StorageIsolation"
	EvidenceFencingDisabled   = "FencingDisabled"
)

// Gate is the fencing gate's verdict: may the node's volumes be released?
type Gate struct {
	// Open is true when eviction and release are safe.
	Open bool
	// Disabled is true when fencing.mode is Disabled and the gate was skipped.
	Disabled bool
	// Evidence lists what proved the node fenced.
	Evidence []string
	// Missing says, when closed, what is missing.
	Missing string
	// MissingSources names the enabled evidence sources that do not hold
	// (a bounded set, used as a metric label).
	MissingSources []string
}

// EvaluateGate decides whether the failed node is proven unable to write. It
// never opens for a missing or Ready node. In RequireEvidence mode one
// enabled evidence source must hold.
func EvaluateGate(o Observation) Gate {
	switch {
	case o.Node == nil:
		return Gate{Missing: "the node does not exist"}
	case o.Node.Ready:
		return Gate{Missing: fmt.Sprintf("node %s is Ready", o.Node.Name)}
	case o.Spec.Fencing.Mode == s3gwv1alpha1.FencingModeDisabled:
		return Gate{Open: true, Disabled: true, Evidence: []string{EvidenceFencingDisabled}}
	}

	var v verdict
	fencing := o.Spec.Fencing
	if fencing.OutOfServiceTaintEnabled() {
		v.check(EvidenceOutOfServiceTaint, outOfServiceTaintMissing(o), EvidenceOutOfServiceTaint)
	}
	if fencing.StorageIsolationEnabled() {
		why := storageIsolationMissing(o)
		if why != "" {
			why = "storage isolation: " + why
		}
		v.check(EvidenceStorageIsolation, why, EvidenceStorageIsolation)
	}
	for _, listed := range fencing.Remediators {
		v.remediators(o.Evidence.Remediators, listed)
	}
	if fencing.Delegate != nil {
		v.delegate(o.Evidence, fencing.Delegate.ConditionType)
	}

	if len(v.evidence) > 0 {
		return Gate{Open: true, Evidence: v.evidence}
	}
	return Gate{Missing: strings.Join(v.missing, "; "), MissingSources: v.sources}
}

// verdict collects, source by source, what holds and what is missing.
type verdict struct {
	evidence, missing, sources []string
}

// check records a source that holds when why is empty, else what is missing.
func (v *verdict) check(evidence, why, source string) {
	if why == "" {
		v.evidence = append(v.evidence, evidence)
		return
	}
	v.missing = append(v.missing, why)
	v.sources = append(v.sources, source)
}

func outOfServiceTaintMissing(o Observation) string {
	if o.Node.ForeignOutOfServiceTaint {
		return ""
	}
	return "no node.kubernetes.io/out-of-service taint"
}

// remediators accepts each CR of the listed kind whose condition is True.
func (v *verdict) remediators(crs []RemediatorCR, listed s3gwv1alpha1.RemediatorEvidence) {
	found, fenced := false, false
	for _, cr := range crs {
		if cr.Kind != listed.Kind {
			continue
		}
		found = true
		if cr.Fenced {
			fenced = true
			v.evidence = append(v.evidence, cr.Kind+"/"+cr.Name)
		} else {
			v.missing = append(v.missing, fmt.Sprintf("%s/%s has no %s=True", cr.Kind, cr.Name, listed.ConditionType))
		}
	}
	if !found {
		v.missing = append(v.missing, fmt.Sprintf("no %s for the node", listed.Kind))
	}
	if !fenced {
		v.sources = append(v.sources, listed.Kind)
	}
}

// delegate accepts the delegate fencing CR once its condition is True.
func (v *verdict) delegate(e Evidence, conditionType string) {
	d := e.Delegate
	switch {
	case e.DelegateError != "":
		v.missing = append(v.missing, "delegate: "+e.DelegateError)
	case d == nil:
		v.missing = append(v.missing, "delegate fencing CR not created yet")
	case d.Fenced:
		v.evidence = append(v.evidence, "delegate "+d.Kind+"/"+d.Name)
		return
	default:
		v.missing = append(v.missing, fmt.Sprintf("delegate %s/%s has no %s=True", d.Kind, d.Name, conditionType))
	}
	v.sources = append(v.sources, "Delegate")
}

// storageIsolationMissing returns why storage isolation does not hold, or ""
// when it does: Longhorn reports the node down and every target volume is a
// Longhorn RWO volume with no replica on the node, so the old engine has
// nothing left to write to. A target set without such volumes proves nothing.
func storageIsolationMissing(o Observation) string {
	if !o.LonghornAvailable {
		return "Longhorn is not installed"
	}
	if !o.Evidence.LonghornNodeDown {
		return "Longhorn does not report the node down"
	}
	volumes := 0
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			switch {
			case !v.Releasable():
				return fmt.Sprintf("volume %s is not a Longhorn RWO volume", v.Claim)
			case v.ReplicaOnFailedNode:
				return fmt.Sprintf("a replica of %s is on the node", v.LonghornVolume)
			}
			volumes++
		}
	}
	if volumes == 0 {
		return "no Longhorn volume to isolate"
	}
	return ""
}
