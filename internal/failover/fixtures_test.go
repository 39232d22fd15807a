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

import "time"

// The base package's tests share the failover core's timeline
// (internal/failover/fixture cannot be imported here: it imports this
// package).
var (
	testNow      = time.Date(2026, time.March, 4, 12, 0, 0, 0, time.UTC)
	testFailedAt = testNow.Add(-10 * time.Minute)
	testFencedAt = testNow.Add(-time.Minute)
)

// deadKubelet is the heartbeat of a node whose kubelet went silent at
// testFailedAt, as the controller saw it.
func deadKubelet() Heartbeat {
	return Heartbeat{Ready: ReadyUnknown, ReadySince: testFailedAt.Add(50 * time.Second),
		KubeletPosted: testFailedAt, LeaseRenewed: testFailedAt, LeaseDuration: 40 * time.Second,
		Seen: HeartbeatSighting{KubeletPosted: testFailedAt, LeaseRenewed: testFailedAt, At: testFailedAt}}
}
