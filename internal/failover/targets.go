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
	"time"
)

// AllRecorded: the memory records every target, and there is one.
func AllRecorded(targets []Target) bool {
	for _, t := range targets {
		if !t.Recorded {
			return false
		}
	}
	return len(targets) > 0
}

// MovedOff: no target's pod is left in the API and every volume is
// released from the node.
func MovedOff(targets []Target) bool { return AllReleased(targets) && !AnyPodPresent(targets) }

// AnyPodPresent: some target's pod is still in the API.
func AnyPodPresent(targets []Target) bool {
	for _, t := range targets {
		if t.PodPresent {
			return true
		}
	}
	return false
}

// AllReleased: no target volume is attached to the failed node any more.
func AllReleased(targets []Target) bool {
	for _, t := range targets {
		for _, v := range t.Volumes {
			if v.ToRelease() {
				return false
			}
		}
	}
	return true
}

// AllReplaced: every target has a Ready replacement on another node.
func AllReplaced(targets []Target) bool {
	for _, t := range targets {
		if t.Replacement == nil {
			return false
		}
	}
	return true
}

// Stranded describes the replicas of v that live where
// longhorn-manager cannot reach them: on the failed node, or on another
// node that is down. Longhorn cannot stop their processes, and they may
// have writes the others lack.
func (v Volume) Stranded(failedNode string, now time.Time) []string {
	var out []string
	for _, r := range v.Replicas {
		if r.Node == failedNode {
			out = append(out, fmt.Sprintf("replica %s of %s is on the failed node", r.Name, v.LonghornVolume))
			continue
		}
		if reachable, state := r.Host.Reach(now); r.Node != "" && !reachable {
			out = append(out, fmt.Sprintf("replica %s of %s is on node %s, which longhorn-manager cannot reach (%s)",
				r.Name, v.LonghornVolume, r.Node, state))
		}
	}
	return out
}

// HealthyReplicasElsewhere counts the replicas a new engine could start
// from if node failed at now: healthy, on another node longhorn-manager
// reaches (the storage check's own rule, replica by replica).
func (v Volume) HealthyReplicasElsewhere(node string, now time.Time) int32 {
	var n int32
	for _, r := range v.Replicas {
		if (Volume{Replicas: []Replica{r}}).HealthyReplicaElsewhere(node, now) {
			n++
		}
	}
	return n
}
