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
	"testing"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// TestEveryStrategyHasAReleaser keeps the descriptors and their adapters in
// step: a strategy Decide plans but nothing writes would never release.
func TestEveryStrategyHasAReleaser(t *testing.T) {
	for _, s := range failover.Strategies {
		if Releasers[s.Name] == nil {
			t.Errorf("release strategy %s has no adapter in Releasers", s.Name)
		}
	}
	if len(Releasers) != len(failover.Strategies) {
		t.Errorf("%d releasers for %d strategies", len(Releasers), len(failover.Strategies))
	}
}
