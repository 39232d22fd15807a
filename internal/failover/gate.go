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

	var evidence, missing, sources []string
	fencing := o.Spec.Fencing
	if fencing.OutOfServiceTaintEnabled() {
		if o.Node.ForeignOutOfServiceTaint {
			evidence = append(evidence, EvidenceOutOfServiceTaint)
		} else {
			missing = append(missing, "no node.kubernetes.io/out-of-service taint")
			sources = append(sources, EvidenceOutOfServiceTaint)
		}
	}
	if fencing.StorageIsolationEnabled() {
		if why := storageIsolationMissing(o); why == "" {
			evidence = append(evidence, EvidenceStorageIsolation)
		} else {
			missing = append(missing, "storage isolation: "+why)
			sources = append(sources, EvidenceStorageIsolation)
		}
	}
	for _, listed := range fencing.Remediators {
		found := false
		for _, cr := range o.Evidence.Remediators {
			if cr.Kind != listed.Kind {
				continue
			}
			found = true
			if cr.Fenced {
				evidence = append(evidence, cr.Kind+"/"+cr.Name)
			} else {
				missing = append(missing, fmt.Sprintf("%s/%s has no %s=True", cr.Kind, cr.Name, listed.ConditionType))
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("no %s for the node", listed.Kind))
		}
		if !remediatorFenced(o.Evidence.Remediators, listed.Kind) {
			sources = append(sources, listed.Kind)
		}
	}
	if fencing.Delegate != nil {
		if d := o.Evidence.Delegate; d == nil || !d.Fenced || o.Evidence.DelegateError != "" {
			sources = append(sources, "Delegate")
		}
		switch d := o.Evidence.Delegate; {
		case o.Evidence.DelegateError != "":
			missing = append(missing, "delegate: "+o.Evidence.DelegateError)
		case d == nil:
			missing = append(missing, "delegate fencing CR not created yet")
		case d.Fenced:
			evidence = append(evidence, "delegate "+d.Kind+"/"+d.Name)
		default:
			missing = append(missing, fmt.Sprintf("delegate %s/%s has no %s=True", d.Kind, d.Name, fencing.Delegate.ConditionType))
		}
	}

	if len(evidence) > 0 {
		return Gate{Open: true, Evidence: evidence}
	}
	return Gate{Missing: strings.Join(missing, "; "), MissingSources: sources}
}

func remediatorFenced(crs []RemediatorCR, kind string) bool {
	for _, cr := range crs {
		if cr.Kind == kind && cr.Fenced {
			return true
		}
	}
	return false
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
