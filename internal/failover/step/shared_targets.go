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
	"reflect"
	"slices"
	"strings"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// Rule is one part of a spec that decides whether, and how, a selected pod
// is moved: the evidence that may open the gate, how the node is fenced,
// and how its volumes are released. Defaults are applied, so a field left
// out and one set to its default are the same rule.
type Rule struct {
	// Field is the spec field, as the API names it.
	Field string
	// Of is the rule as the spec sets it.
	Of func(Spec) any
	// Evidence is true for what counts as fencing evidence: moot, and not
	// compared, when either spec disables fencing (the gate then reads no
	// evidence, and fencing.mode tells the difference).
	Evidence bool
}

// Rules are the rules two remediations must share to act on the same pod.
// The selector, the namespaces and the timeouts are not among them: they
// choose which pods and when to give up, not how a pod is moved.
var Rules = []Rule{
	{Field: "fencing.mode", Of: func(s Spec) any { return disabled(s) }},
	{Field: "fencing.outOfServiceTaint", Evidence: true, Of: func(s Spec) any { return s.Fencing.OutOfServiceTaintEnabled() }},
	{Field: "fencing.storageIsolation", Evidence: true, Of: func(s Spec) any { return s.Fencing.StorageIsolationEnabled() }},
	{Field: "fencing.remediators", Evidence: true, Of: func(s Spec) any {
		out := make([]string, 0, len(s.Fencing.Remediators))
		for _, r := range s.Fencing.Remediators {
			out = append(out, r.APIVersion+"/"+r.Kind+"="+r.ConditionType)
		}
		slices.Sort(out)
		return out
	}},
	{Field: "fencing.delegate", Evidence: true, Of: func(s Spec) any { return s.Fencing.Delegate }},
	{Field: "release.strategy", Of: func(s Spec) any { return release.Of(s.Release.Strategy).Name }},
	{Field: "release.requireReachableReplicas", Of: func(s Spec) any { return s.Release.RequireReachableReplicasOrDefault() }},
	{Field: "release.acceptStaleReadsWithoutRevisionCounter", Of: func(s Spec) any {
		return s.Release.AcceptStaleReadsWithoutRevisionCounter
	}},
	{Field: "release.longhornNamespace", Of: func(s Spec) any { return s.Release.LonghornNamespaceOrDefault() }},
}

// Spec is a remediation's spec, as Rules read it.
type Spec = s3gwv1alpha1.S3GWRemediationSpec

func disabled(s s3gwv1alpha1.S3GWRemediationSpec) bool {
	return s.Fencing.Mode == s3gwv1alpha1.FencingModeDisabled
}

// RulesDiffer names the rules by which a and b would move the same pod
// differently; none when they agree.
func RulesDiffer(a, b s3gwv1alpha1.S3GWRemediationSpec) []string {
	var out []string
	for _, r := range Rules {
		if r.Evidence && (disabled(a) || disabled(b)) {
			continue
		}
		if !reflect.DeepEqual(r.Of(a), r.Of(b)) {
			out = append(out, r.Field)
		}
	}
	return out
}

// sharedTargetsCheck blocks every step that acts on the node or its pods
// while another remediation of the node selects some of the same pods under
// different rules. Neither may act: whichever acted first would move the
// pod by its own rules (a Disabled gate, a stale-read opt-out, another
// release) where the other's would have waited. Both wait, each saying
// which remediation, which pods and which rules, until the specs agree or
// the selectors no longer overlap. Two remediations with the same rules act
// as one would: every write is idempotent.
func sharedTargetsCheck(o failover.State) (bool, Decision) {
	for _, other := range o.Others {
		if len(other.Shared) == 0 {
			continue
		}
		differ := RulesDiffer(o.Spec, other.Spec)
		if len(differ) == 0 {
			continue
		}
		msg := fmt.Sprintf("S3GWRemediation %s also selects %s under different rules (%s); neither acts until they agree",
			other.Name, strings.Join(other.Shared, ", "), strings.Join(differ, ", "))
		return true, Decision{
			Phase: s3gwv1alpha1.PhasePending, Stage: StageSharedTargets,
			Reason: s3gwv1alpha1.ReasonConflictingRemediations, Message: msg,
			Blocks: []failover.Block{{Condition: s3gwv1alpha1.ConditionWorkloadEvicted, Reason: s3gwv1alpha1.ReasonConflictingRemediations, Message: msg}},
			Wait:   WaitForFencing,
		}
	}
	return false, Decision{}
}
