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
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// controllerDetach drops the volume from the node's status.volumesInUse,
// so kube-controller-manager's attach-detach controller detaches it at once
// through its normal path. A live kubelet rewrites that list, so it waits
// for a lost one.
var controllerDetach = Strategy{
	Name:                s3gwv1alpha1.ReleaseControllerDetach,
	Summary:             "removes the volume from a dead kubelet's status.volumesInUse: the attach-detach controller detaches it at once through its normal path; touches nothing else on the node",
	WaitsForLostKubelet: true,
	VolumeWrite:         func(v failover.Volume) bool { return v.InUseOnNode },
	Budget:              5300 * time.Millisecond,
	Needs: []failover.Need{{Resource: failover.Nodes, Verbs: failover.Read},
		{Resource: failover.Nodes + "/status", Verbs: []string{failover.VerbPatch}, Policy: policyNodeWrites}},
}
