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

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// CR → released ends when kube-controller-manager has detached the volume.
// The bench splits it at three of the operator's writes, read from
// kube-apiserver's audit log:
//   - the removal of the failed node's ticket from Longhorn's
//     VolumeAttachment: after it the simulated Longhorn stops the engine
//     and the replicas, which the operator waits for;
//   - the force delete of the old pod, once the operator saw every stop;
//   - the release write, with the shipped ControllerDetach strategy the
//     edit of the failed Node's status (volumesInUse): after it only the
//     attach-detach controller and the simulated CSI attacher act.

// The audit log's verbs of the writes read.
const (
	verbPatch  = "patch"
	verbUpdate = "update"
	verbDelete = "delete"
)

// operatorWrite is one of the operator's writes for a failure.
type operatorWrite int

const (
	ticketRemoval operatorWrite = iota
	forceDelete
	releaseWrite
	operatorWriteCount
)

// milestone names the write in a failure's milestones.
func (w operatorWrite) milestone() string {
	switch w {
	case ticketRemoval:
		return "the operator's ticket removal (audit log)"
	case forceDelete:
		return "the operator's force delete (audit log)"
	default:
		return "the operator's release write (audit log)"
	}
}

// failedGateway names what the operator writes for a failure.
type failedGateway struct {
	Node, PodNamespace, Pod, Volume string
	FailedAt                        time.Time
}

func failedGatewayOf(r *harness.Run) failedGateway {
	return failedGateway{Node: r.Node, PodNamespace: r.OldPod.Namespace, Pod: r.OldPod.Name,
		Volume: r.Gateway.Volume.Name, FailedAt: r.FailedAt}
}

// is reports whether r, one of the operator's requests, is write w for f.
func (w operatorWrite) is(r apiaudit.Request, f failedGateway) bool {
	switch w {
	case ticketRemoval:
		return r.APIGroup == longhorn.GroupVersion.Group && r.Resource == "volumeattachments" && r.Subresource == "" &&
			r.Verb == verbPatch && r.Name == f.Volume
	case forceDelete:
		return r.APIGroup == "" && r.Resource == "pods" && r.Verb == verbDelete && r.Namespace == f.PodNamespace && r.Name == f.Pod
	default:
		return r.APIGroup == "" && r.Resource == "nodes" && r.Subresource == "status" &&
			(r.Verb == verbPatch || r.Verb == verbUpdate) && r.Name == f.Node
	}
}

// operatorWriteRequest keeps the audit log's requests operatorWrites reads:
// the operator's writes, a few hundred among the log's hundred thousand.
func operatorWriteRequest(r apiaudit.Request) bool {
	return r.User == harness.OperatorUser && (r.Verb == verbPatch || r.Verb == verbUpdate || r.Verb == verbDelete)
}

// writeTimes are when kube-apiserver received a failure's operator writes;
// zero for one not found.
type writeTimes [operatorWriteCount]time.Time

// operatorWrites finds in reqs (in the order received) each failure's
// first accepted write of each kind after its node failed, by node. A
// write refused (a 409 that lost its optimistic lock, a 404 delete of a
// pod already gone) changed nothing and does not count.
func operatorWrites(reqs []apiaudit.Request, failures []failedGateway) map[string]writeTimes {
	out := map[string]writeTimes{}
	for _, r := range reqs {
		if !operatorWriteRequest(r) || r.Code < 200 || r.Code >= 300 {
			continue
		}
		for _, f := range failures {
			if r.Received.Before(f.FailedAt) {
				continue
			}
			times := out[f.Node]
			for w := range operatorWriteCount {
				if times[w].IsZero() && w.is(r, f) {
					times[w] = r.Received
				}
			}
			out[f.Node] = times
		}
	}
	return out
}

// onTimeline places an operator write read from the audit log (a
// wall-clock time) on a failure's timeline (monotonic time since the node
// was lost). If the machine's wall clock was set since the node was lost
// (it stepped by about 0.35 s in one run), the wall-clock difference
// is off by that step: step is how far it moved by the time the bench saw
// the CR, seconds before the writes.
func onTimeline(wrote, failedAt time.Time, step time.Duration) time.Duration {
	return wrote.Sub(failedAt.Round(0)) - step
}
