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

package evidence

import (
	"fmt"
	"strings"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// EvidenceStorageIsolation names storage isolation as evidence.
const EvidenceStorageIsolation = "StorageIsolation"

// storageIsolation accepts that the old engine has nothing left to write
// to: Longhorn reports the node down and has no replica where it cannot
// stop it. It proves the storage safe, not the node off.
var storageIsolation = Source{
	Name:       EvidenceStorageIsolation,
	Summary:    "Longhorn reports the node down, and every replica lives on a node Longhorn reaches: the old engine has nothing left to write to",
	Field:      "storageIsolation",
	EnabledCEL: "!has(self.storageIsolation) || self.storageIsolation",
	Enabled:    s3gwv1alpha1.FencingSpec.StorageIsolationEnabled,
	Judge: func(o failover.State, v *Verdict) {
		why := storageIsolationMissing(o)
		if why != "" {
			why = "storage isolation: " + why
		}
		v.check(EvidenceStorageIsolation, why, EvidenceStorageIsolation)
	},
	// Longhorn reports a node down once Kubernetes marks it NotReady.
	Imagine: func(_ failover.State, f *failover.State) { f.Evidence.LonghornNode = failover.LonghornDown },
	// Longhorn, installed, may yet report the node down.
	MayStillProve: func(o failover.State) bool { return o.LonghornAvailable },
	Needs: []failover.Need{{Group: failover.GroupLonghorn, Resource: failover.Nodes, Verbs: failover.Read}, {Group: failover.GroupLonghorn, Resource: "replicas", Verbs: failover.Read},
		{Group: failover.GroupLonghorn, Resource: "volumes", Verbs: failover.Read}, {Group: "coordination.k8s.io", Resource: "leases", Verbs: failover.Read}},
}

// storageIsolationMissing returns why storage isolation proves nothing, or ""
// when it does: Longhorn reports the node down, every target volume is a
// Longhorn RWO volume with no replica on the node, and every other replica
// lives where longhorn-manager can stop it. The old engine then writes to
// nothing that survives the detach: its remote replicas are stopped before
// a new engine starts, and it never re-adds them. A replica on another
// unreachable node would keep taking its writes. A target set without such
// volumes proves nothing.
func storageIsolationMissing(o failover.State) string {
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
			unreachable = append(unreachable, v.Stranded(o.Node.Name, o.Now)...)
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
