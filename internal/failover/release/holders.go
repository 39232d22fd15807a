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

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// Blockers names exactly what keeps the move from finishing, for the
// release deadline's message: the target pods still in the API with their
// finalizers, and for each volume its Longhorn tickets, its
// VolumeAttachments (with the finalizers that keep a deletion), a kubelet's
// volumesInUse and the replica stops it waits for.
func Blockers(o failover.State) (pods, volumes []string) {
	return podHolders(o), volumeHolders(o)
}

// podHolders names the target pods still in the API, with the finalizers
// that keep them there.
func podHolders(o failover.State) []string {
	var out []string
	for _, t := range o.Targets {
		switch {
		case !t.PodPresent:
		case len(t.Finalizers) > 0:
			out = append(out, fmt.Sprintf("pod %s/%s is kept by finalizers %s", t.Namespace, t.Name, strings.Join(t.Finalizers, ", ")))
		default:
			out = append(out, fmt.Sprintf("pod %s/%s is still in the API", t.Namespace, t.Name))
		}
	}
	return out
}

// volumeHolders names, for each volume still attached to the failed node,
// what keeps it there.
func volumeHolders(o failover.State) []string {
	var out []string
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if !v.ToRelease() {
				continue
			}
			var why []string
			for _, ticket := range v.Tickets {
				why = append(why, fmt.Sprintf("Longhorn ticket %s (type %s)", ticket.ID, ticket.Type))
			}
			for _, va := range v.Attachments {
				switch {
				case va.Deleting && len(va.Finalizers) > 0:
					why = append(why, fmt.Sprintf("VolumeAttachment %s being deleted, kept by finalizers %s", va.Name, strings.Join(va.Finalizers, ", ")))
				case va.Deleting:
					why = append(why, fmt.Sprintf("VolumeAttachment %s being deleted", va.Name))
				default:
					why = append(why, fmt.Sprintf("VolumeAttachment %s", va.Name))
				}
			}
			if v.InUseOnNode {
				why = append(why, fmt.Sprintf("node %s's status.volumesInUse", o.Node.Name))
			}
			if stops := replicaStopHolders(o, v); stops != "" {
				why = append(why, stops)
			}
			out = append(out, fmt.Sprintf("volume %s is kept attached by %s", v.LonghornVolume, strings.Join(why, ", ")))
		}
	}
	return out
}
