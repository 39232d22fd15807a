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

package attachments

import (
	"testing"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// TestEveryStrategyHasAnAdapter keeps the descriptors and their adapters in
// step: a strategy the step plans but nothing writes would never release,
// and what its Tidy asks for would never be done.
func TestEveryStrategyHasAnAdapter(t *testing.T) {
	for _, s := range release.Strategies {
		adapter, ok := Adapters[s.Name]
		switch {
		case !ok || adapter.Release == nil:
			t.Errorf("release strategy %s has no adapter that releases", s.Name)
		case s.Tidy != nil && adapter.Perform == nil:
			t.Errorf("release strategy %s tidies, but its adapter performs nothing", s.Name)
		}
	}
	if len(Adapters) != len(release.Strategies) {
		t.Errorf("%d adapters for %d strategies", len(Adapters), len(release.Strategies))
	}
}
