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
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
)

// StorageProblem says why a volume still to release cannot be released yet,
// with the reason to report it by; empty when none: it has no healthy
// replica on another node (releasing it would only yield a faulted
// volume), has a replica Longhorn cannot reach (it may have acknowledged
// writes the others lack), or Longhorn cannot be read. All may pass (a
// replica rebuilds, a node returns, Longhorn restarts).
func StorageProblem(o failover.State, gate evidence.Gate) (reason, message string) {
	var unhealthy []string
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if !v.ToRelease() {
				continue
			}
			if !o.LonghornAvailable {
				msg := fmt.Sprintf("Volume %s uses driver.longhorn.io, but Longhorn's CRDs are not served", v.PersistentVolume)
				return s3gwv1alpha1.ReasonLonghornUnavailable, msg
			}
			if v.LonghornVolumeMissing {
				msg := fmt.Sprintf("Longhorn volume %s not found in %s; check release.longhornNamespace", v.LonghornVolume,
					o.Spec.Release.LonghornNamespace)
				return s3gwv1alpha1.ReasonLonghornUnavailable, msg
			}
			if !v.HealthyReplicaElsewhere(o.Node.Name, o.Now) {
				unhealthy = append(unhealthy, v.LonghornVolume)
			}
		}
	}
	if len(unhealthy) > 0 {
		msg := fmt.Sprintf("No healthy replica on another node for %s: releasing would only fault the volume", strings.Join(unhealthy, ", "))
		return s3gwv1alpha1.ReasonNoHealthyReplica, msg
	}
	if stranded := strandedToRelease(o); len(stranded) > 0 && !gate.Disabled && o.Spec.Release.RequireReachableReplicasOrDefault() {
		msg := "Replicas Longhorn cannot reach may have writes the others lack: " + strings.Join(stranded, ", ")
		return s3gwv1alpha1.ReasonReplicasUnreachable, msg
	}
	return "", ""
}

// strandedToRelease lists the stranded replicas of the volumes still to
// release.
func strandedToRelease(o failover.State) []string {
	var out []string
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if v.ToRelease() {
				out = append(out, v.Stranded(o.Node.Name, o.Now)...)
			}
		}
	}
	return out
}
