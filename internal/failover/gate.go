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
		v.remediators(o, listed)
	}
	if fencing.Delegate != nil {
		v.delegate(o, fencing.Delegate.ConditionType)
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

// outOfServiceTaintMissing returns why a foreign out-of-service taint does
// not count, or "" when it does. A taint without timeAdded counts: whoever
// added it, kube-controller-manager itself acts on it for a NotReady node
// (Pod GC force-deletes the node's terminating pods, the attach-detach
// controller force-detaches its volumes), so a release we do adds nothing
// to what the taint already does.
func outOfServiceTaintMissing(o Observation) string {
	taint := o.Node.ForeignOutOfServiceTaint
	switch {
	case taint == nil:
		return "no node.kubernetes.io/out-of-service taint"
	case taint.TimeAdded == nil:
		return ""
	}
	if why := notCurrent(o, *taint.TimeAdded); why != "" {
		return "the node.kubernetes.io/out-of-service taint " + why
	}
	return ""
}

// notCurrent returns why evidence that arose at t does not prove the
// node's current failure, or "" when it does. It must be newer than the
// node's last sign of life, so evidence from a failure the node recovered
// from never counts, and the kubelet must have gone silent since: a Lease
// still being renewed contradicts any claim that the node is fenced.
func notCurrent(o Observation, t time.Time) string {
	hb := o.Node.Heartbeat
	if last := hb.LastSignOfLife(); !t.After(last) {
		return fmt.Sprintf("is stale: it dates from %s, not after the node's last sign of life at %s",
			stamp(t), stamp(last))
	}
	if !hb.Silent(o.Now) {
		return fmt.Sprintf("is not trusted yet: the node's Lease, renewed at %s, has not expired", stamp(hb.LeaseRenewed))
	}
	return ""
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// remediators accepts each CR of the listed kind whose condition became True
// during the node's current failure.
func (v *verdict) remediators(o Observation, listed s3gwv1alpha1.RemediatorEvidence) {
	if why, invalid := o.Evidence.InvalidRemediators[listed.Kind]; invalid {
		v.missing = append(v.missing, listed.Kind+": "+why)
		v.sources = append(v.sources, listed.Kind)
		return
	}
	found, fenced := false, false
	for _, cr := range o.Evidence.Remediators {
		if cr.Kind != listed.Kind {
			continue
		}
		found = true
		if why := fencedMissing(o, cr, listed.ConditionType); why != "" {
			v.missing = append(v.missing, cr.Kind+"/"+cr.Name+" "+why)
			continue
		}
		fenced = true
		v.evidence = append(v.evidence, cr.Kind+"/"+cr.Name)
	}
	if !found {
		v.missing = append(v.missing, fmt.Sprintf("no %s for the node", listed.Kind))
	}
	if !fenced {
		v.sources = append(v.sources, listed.Kind)
	}
}

// fencedMissing returns why a fencer's CR does not prove the current
// failure fenced, or "" when it does.
func fencedMissing(o Observation, cr RemediatorCR, conditionType string) string {
	switch {
	case !cr.Fenced:
		return fmt.Sprintf("has no %s=True", conditionType)
	case cr.FencedAt == nil:
		return fmt.Sprintf("has %s=True without a lastTransitionTime, so it cannot be tied to this failure", conditionType)
	}
	if why := notCurrent(o, *cr.FencedAt); why != "" {
		return fmt.Sprintf("%s=True %s", conditionType, why)
	}
	return ""
}

// delegate accepts the delegate fencing CR once its condition became True
// during the node's current failure. Until it exists, a CR of its kind for
// the node that someone else created during this failure (NHC's own step,
// another remediator) is judged instead: it fences the same failure.
func (v *verdict) delegate(o Observation, conditionType string) {
	e := o.Evidence
	d, label := e.Delegate, "delegate "
	reused := reusableFencer(o)
	if d == nil && reused != nil {
		d, label = reused, "reused "
	}
	switch {
	case e.DelegateError != "" && reused == nil:
		v.missing = append(v.missing, "delegate: "+e.DelegateError)
	case d == nil:
		v.missing = append(v.missing, "delegate fencing CR not created yet")
	default:
		why := fencedMissing(o, *d, conditionType)
		if why == "" {
			v.evidence = append(v.evidence, label+d.Kind+"/"+d.Name)
			return
		}
		v.missing = append(v.missing, label+d.Kind+"/"+d.Name+" "+why)
	}
	v.sources = append(v.sources, "Delegate")
}

// reusableFencer returns a CR of the delegate's kind for the node that this
// remediation did not create, created after the node's last sign of life:
// it belongs to this failure, so creating another would fence twice.
func reusableFencer(o Observation) *RemediatorCR {
	if o.Evidence.Delegate != nil {
		return nil
	}
	last := o.Node.Heartbeat.LastSignOfLife()
	for i := range o.Evidence.OtherFencers {
		if cr := &o.Evidence.OtherFencers[i]; cr.CreatedAt.After(last) {
			return cr
		}
	}
	return nil
}

// strandedReplicas describes the replicas of v that live where
// longhorn-manager cannot reach them: on the failed node, or on another
// node that is down. Longhorn cannot stop their processes, and they may
// hold writes the others lack.
func strandedReplicas(o Observation, v Volume) []string {
	var out []string
	for _, r := range v.Replicas {
		if r.Node == o.Node.Name {
			out = append(out, fmt.Sprintf("replica %s of %s is on the failed node", r.Name, v.LonghornVolume))
			continue
		}
		if reachable, state := r.Host.Reach(o.Now); r.Node != "" && !reachable {
			out = append(out, fmt.Sprintf("replica %s of %s is on node %s, which longhorn-manager cannot reach (%s)",
				r.Name, v.LonghornVolume, r.Node, state))
		}
	}
	return out
}

// storageIsolationMissing returns why storage isolation does not hold, or ""
// when it does: Longhorn reports the node down, every target volume is a
// Longhorn RWO volume with no replica on the node, and every other replica
// lives where longhorn-manager can stop it. The old engine then writes to
// nothing that survives the detach: its remote replicas are stopped before
// a new engine starts, and it never re-adds them. A replica on another
// unreachable node would keep taking its writes. A target set without such
// volumes proves nothing.
func storageIsolationMissing(o Observation) string {
	if !o.LonghornAvailable {
		return "Longhorn is not installed"
	}
	if !o.Evidence.LonghornNode.Down() {
		return "Longhorn does not report the node down"
	}
	volumes := 0
	var unreachable []string
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if !v.Releasable() {
				return fmt.Sprintf("volume %s is not a Longhorn RWO volume", v.Claim)
			}
			for _, r := range v.Replicas {
				if r.Node == o.Node.Name {
					return fmt.Sprintf("replica %s of %s is on the node", r.Name, v.LonghornVolume)
				}
			}
			unreachable = append(unreachable, strandedReplicas(o, v)...)
			volumes++
		}
	}
	switch {
	case len(unreachable) > 0:
		return strings.Join(unreachable, ", ")
	case volumes == 0:
		return "no Longhorn volume to isolate"
	}
	return ""
}
