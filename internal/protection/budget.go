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
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// DefaultNodeMonitorGracePeriod is kube-controller-manager's
// --node-monitor-grace-period since Kubernetes 1.32: how long a node may be
// silent before the node-lifecycle controller marks it NotReady (Unknown).
// The manager cannot read the flag; --node-monitor-grace-period tells it.
const DefaultNodeMonitorGracePeriod = 50 * time.Second

// ReleaseTime is how long a failover took with a release strategy, as
// measured (release.Strategy.Budget); unset means the default,
// ControllerDetach.
func ReleaseTime(strategy s3gwv1alpha1.ReleaseStrategy) time.Duration {
	return release.Of(strategy).Budget
}

// ExpectedRTO is the failure-to-serving budget of a pod remediated through
// h: the node-monitor grace period until Kubernetes marks the node NotReady,
// the NodeHealthCheck's unhealthy duration (and the timeouts of escalation
// steps before the template's) until it creates the S3GWRemediation, and
// the measured release time of the strategy.
func ExpectedRTO(grace time.Duration, h HealthCheck, strategy s3gwv1alpha1.ReleaseStrategy) time.Duration {
	return grace + h.NoticedAfter + h.StepDelay + ReleaseTime(strategy)
}
