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

package release

import (
	"fmt"
	"strings"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// VolumeRule refuses the release of a volume for how the volume itself is
// set up, whatever the evidence: no fence undoes it and no wait mends it,
// so the remediation fails at once (NodeHealthCheck escalates) and the
// protection report names it before any failure. The step applies the rules
// before the gate; IfNodeFailed before it imagines a failure.
type VolumeRule struct {
	// Reason is the condition reason of a refusal.
	Reason string
	// Refuses reports whether the rule refuses to release v under spec.
	Refuses func(spec s3gwv1alpha1.S3GWRemediationSpec, v failover.Volume) bool
	// Why says, for the Longhorn volumes named, why the release is refused.
	Why func(volumes []string) string
	// Fix says how to set the volume up so that the rule holds, and the
	// spec field that accepts the risk instead.
	Fix string
}

// VolumeRules are the rules every volume to release must pass.
var VolumeRules = []VolumeRule{revisionCounterRequired}

// revisionCounterRequired: with the revision counter disabled, Longhorn's
// next engine compares no replicas (longhorn-engine pkg/controller
// control.go Controller.Start skips checkReplicasRevisionCounter) and serves
// every replica not marked failed. A write in flight at the crash reached
// some of them; a replica the old engine dropped while its node's
// longhorn-manager could not reach the API server was never marked failed
// and lacks every write acknowledged after. s3gw would read stale or mixed
// blocks. The divergence happens before any fence.
var revisionCounterRequired = VolumeRule{
	Reason: s3gwv1alpha1.ReasonRevisionCounterDisabled,
	Refuses: func(spec s3gwv1alpha1.S3GWRemediationSpec, v failover.Volume) bool {
		return v.RevisionCounterDisabled && !spec.Release.AcceptStaleReadsWithoutRevisionCounter
	},
	Why: func(volumes []string) string {
		return fmt.Sprintf("Longhorn volume %s has the revision counter disabled: its next engine may serve stale data, "+
			"so it is never released", strings.Join(volumes, ", "))
	},
	Fix: "Fix: move s3gw's data to a volume of a StorageClass with disableRevisionCounter: \"false\" (a PVC with " +
		"spec.dataSource naming the old claim clones it), or accept stale reads: " +
		"release.acceptStaleReadsWithoutRevisionCounter: true",
}

// Refused applies VolumeRules to the volumes still to release: the
// first rule that refuses one, with the volumes it refuses.
func Refused(o failover.State) (VolumeRule, []string) {
	for _, rule := range VolumeRules {
		var refused []string
		for _, t := range o.Targets {
			for _, v := range t.Volumes {
				if v.ToRelease() && rule.Refuses(o.Spec, v) {
					refused = append(refused, v.LonghornVolume)
				}
			}
		}
		if len(refused) > 0 {
			return rule, refused
		}
	}
	return VolumeRule{}, nil
}

// VolumeRuleFix is the fix of the volume rule with the reason, if any.
func VolumeRuleFix(reason string) (string, bool) {
	for _, rule := range VolumeRules {
		if rule.Reason == reason {
			return rule.Fix, true
		}
	}
	return "", false
}
