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

package protection

import (
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// DefaultNodeMonitorGracePeriod is kube-controller-manager's
// --node-monitor-grace-period since Kubernetes 1.32: how long a node may be
// silent before the node-lifecycle controller marks it NotReady (Unknown).
// The manager cannot read the flag; --node-monitor-grace-period tells it.
const DefaultNodeMonitorGracePeriod = 50 * time.Second

// MeasuredReleaseTime is, per release strategy, how long s3gw took from
// NodeHealthCheck creating the S3GWRemediation to a Ready replacement on
// another node: the worst of ten failures ("CR → Ready", max) in the
// failover benchmark of 2026-11-30 (docs/benchmark.md,
// bench/results/2026-11-30/results.md), Longhorn attach included. A
// fencer's own time (a fence agent powering the node off) comes on top.
var MeasuredReleaseTime = map[s3gwv1alpha1.ReleaseStrategy]time.Duration{
	s3gwv1alpha1.ReleaseControllerDetach:       5300 * time.Millisecond,
	s3gwv1alpha1.ReleaseDeleteVolumeAttachment: 66 * time.Second,
	s3gwv1alpha1.ReleaseOutOfServiceTaint:      10 * time.Second,
}

// ReleaseTime is MeasuredReleaseTime of a strategy; unset means the
// default, ControllerDetach.
func ReleaseTime(strategy s3gwv1alpha1.ReleaseStrategy) time.Duration {
	if strategy == "" {
		strategy = s3gwv1alpha1.ReleaseControllerDetach
	}
	return MeasuredReleaseTime[strategy]
}

// ExpectedRTO is the failure-to-serving budget of a pod remediated through
// h: the node-monitor grace period until Kubernetes marks the node NotReady,
// the NodeHealthCheck's unhealthy duration (and the timeouts of escalation
// steps before the template's) until it creates the S3GWRemediation, and
// the measured release time of the strategy.
func ExpectedRTO(grace time.Duration, h HealthCheck, strategy s3gwv1alpha1.ReleaseStrategy) time.Duration {
	return grace + h.NoticedAfter + h.StepDelay + ReleaseTime(strategy)
}
