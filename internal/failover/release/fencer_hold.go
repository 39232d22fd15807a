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
	"strings"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// FencerHold says why no fencer may be started for the node yet, with the
// reason to report it by; empty when one may. A fencer recovers
// by its own strategy (FAR's out-of-service taint releases the volume at
// once; its ResourceDeletion leaves the release to the attach-detach
// controller's force detach), and neither waits for what this
// controller's own release waits for. While a replica of a volume to
// release may alone have the old engine's last writes, such a release
// would have Longhorn start the new engine without it (longhorn-manager
// controller/volume_controller.go, openVolumeDependentResources fails a
// replica on a node it counts down): a replica Longhorn detached whose
// stop is unconfirmed, or one it cannot reach (StorageProblem's
// ReplicasUnreachable, for the same reason).
func FencerHold(o failover.State) (reason, why string) {
	if !o.Spec.Release.RequireReachableReplicasOrDefault() {
		return "", ""
	}
	if unstopped := stopsUnconfirmedAfterDetach(o); len(unstopped) > 0 {
		return s3gwv1alpha1.ReasonReplicaStopUnconfirmed,
			"a replica Longhorn detached is not proven stopped (" + strings.Join(unstopped, "; ") + ")"
	}
	if stranded := strandedToRelease(o); len(stranded) > 0 {
		return s3gwv1alpha1.ReasonReplicasUnreachable,
			"a replica Longhorn cannot reach may have writes the others lack (" + strings.Join(stranded, "; ") + ")"
	}
	return "", ""
}
