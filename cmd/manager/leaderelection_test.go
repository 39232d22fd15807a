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
	"strings"
	"testing"
	"time"
)

func TestLeaderElectionTimings(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name    string
		timings leaderElectionTimings
		wantErr string
	}{
		{"defaults", defaultLeaderElection, ""},
		{"short lease for tests", leaderElectionTimings{3 * s, 2 * s, 500 * time.Millisecond}, ""},
		{"lease not longer than renew deadline", leaderElectionTimings{10 * s, 10 * s, 2 * s}, "--leader-elect-lease-duration (10s) must be longer"},
		{"renew deadline within retry jitter", leaderElectionTimings{15 * s, 2 * s, 2 * s}, "--leader-elect-renew-deadline (2s) must be longer than 1.2"},
		{"zero retry period", leaderElectionTimings{15 * s, 10 * s, 0}, "--leader-elect-retry-period must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.timings.validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	if d := defaultLeaderElection; d.LeaseDuration+d.RetryPeriod > 20*time.Second {
		t.Errorf("default worst-case takeover %s exceeds the 20 s goal", d.LeaseDuration+d.RetryPeriod)
	}
}
