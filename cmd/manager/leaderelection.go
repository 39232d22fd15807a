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
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// leaderElectionTimings are the Lease clocks of the two replicas
// (docs/configuration.md#leader-election explains the trade-off).
type leaderElectionTimings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// defaultLeaderElection takes over from a leader on a dead node within
// LeaseDuration+RetryPeriod (17 s), well inside NodeHealthCheck's
// detection time, while a leader rides out an API server restart of up
// to RenewDeadline (10 s) without giving up the Lease.
var defaultLeaderElection = leaderElectionTimings{
	LeaseDuration: 15 * time.Second,
	RenewDeadline: 10 * time.Second,
	RetryPeriod:   2 * time.Second,
}

// validate applies client-go's rules up front, so that a bad flag fails at
// start with the flag names rather than inside the elector.
func (t leaderElectionTimings) validate() error {
	switch {
	case t.RetryPeriod <= 0:
		return fmt.Errorf("--leader-elect-retry-period must be positive, got %s", t.RetryPeriod)
	case t.LeaseDuration <= t.RenewDeadline:
		return fmt.Errorf("--leader-elect-lease-duration (%s) must be longer than --leader-elect-renew-deadline (%s)",
			t.LeaseDuration, t.RenewDeadline)
	case float64(t.RenewDeadline) <= leaderelection.JitterFactor*float64(t.RetryPeriod):
		return fmt.Errorf("--leader-elect-renew-deadline (%s) must be longer than %.1f × --leader-elect-retry-period (%s)",
			t.RenewDeadline, leaderelection.JitterFactor, t.RetryPeriod)
	}
	return nil
}
