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

package longhornsim

import (
	"crypto/sha512"
	"encoding/hex"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// instanceManagerImage stands in for Longhorn's default instance manager
// image, which goes into the name's hash.
const instanceManagerImage = "longhornio/longhorn-instance-manager:simulated"

// instanceManagerName is the node's v1 all-in-one instance manager's name:
// "instance-manager-" and the first 32 hex digits of the SHA-512 of node,
// image and data engine (types/types.go GetInstanceManagerName).
func instanceManagerName(node string) string {
	sum := sha512.Sum512([]byte(node + instanceManagerImage + "v1"))
	return "instance-manager-" + hex.EncodeToString(sum[:])[:32]
}

// instanceManagerLabels are the labels Longhorn puts on it
// (types/types.go GetInstanceManagerLabels, without the image checksum).
func instanceManagerLabels(node string) map[string]string {
	return map[string]string{
		"longhorn.io/managed-by":            "longhorn-manager",
		"longhorn.io/component":             "instance-manager",
		"longhorn.io/instance-manager-type": "aio",
		"longhorn.io/data-engine":           "v1",
		longhorn.InstanceManagerNodeLabel:   node,
	}
}

// instanceManagerStatus is what Longhorn writes to a node's instance
// manager status, given the node's health and the replicas whose processes
// run there; write is false when nobody writes and the status stays stale.
//
//   - Counted down: another node's manager takes the instance manager over
//     (controller/controller_manager.go isControllerResponsibleFor) and
//     marks it unknown (controller/instance_manager_controller.go
//     syncStatusWithNode). Its process list is kept: syncInstanceStatus
//     blanks it only when stopped, error or starting, and syncMonitor leaves
//     the monitor alone in unknown.
//   - Lost but not counted down: the node's own manager still owns it and
//     cannot reach the API server, so nothing is written.
//   - Otherwise the pod runs, so it is running (syncStatusWithPod), and
//     InstanceManagerMonitor (Run, pollInstanceMap, updateInstanceMap)
//     replaces the list with the processes it runs. Upstream polls within
//     a second of the instance stream's notice; here it follows at once.
func instanceManagerStatus(cur longhorn.InstanceManagerStatus, down, reachable bool, running []string) (status longhorn.InstanceManagerStatus, write bool) {
	switch {
	case down:
		status = *cur.DeepCopy()
		status.CurrentState = longhorn.InstanceManagerUnknown
		return status, true
	case !reachable:
		return cur, false
	default:
		status = longhorn.InstanceManagerStatus{CurrentState: longhorn.InstanceManagerRunning}
		for _, name := range running {
			if status.InstanceReplicas == nil {
				status.InstanceReplicas = make(map[string]longhorn.InstanceProcess, len(running))
			}
			status.InstanceReplicas[name] = longhorn.InstanceProcess{Status: longhorn.InstanceProcessStatus{State: instanceRunning}}
		}
		return status, true
	}
}
