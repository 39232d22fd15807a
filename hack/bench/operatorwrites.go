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

package main

import (
	"time"

	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// CR → released ends when kube-controller-manager has detached the volume,
// after the operator's last write of the release. The bench splits the two
// at that write, read from kube-apiserver's audit log: with the shipped
// ControllerDetach strategy it is the operator's edit of the failed Node's
// status (volumesInUse), after which only the attach-detach controller and
// the simulated CSI attacher act.

// releaseRequest keeps the audit log's requests releaseWrites reads.
func releaseRequest(r apiaudit.Request) bool {
	return r.User == harness.OperatorUser && r.Resource == "nodes" && r.Subresource == "status" &&
		(r.Verb == "patch" || r.Verb == "update")
}

// releaseWrites finds in reqs (in the order received) the operator's first
// accepted write of each failed Node's status after the node failed: when
// kube-apiserver received it, by node. A write that lost its optimistic
// lock (409) changed nothing and does not count.
func releaseWrites(reqs []apiaudit.Request, failedAt map[string]time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	for _, r := range reqs {
		at, failed := failedAt[r.Name]
		_, found := out[r.Name]
		if failed && !found && !r.Received.Before(at) && releaseRequest(r) && r.Code >= 200 && r.Code < 300 {
			out[r.Name] = r.Received
		}
	}
	return out
}
