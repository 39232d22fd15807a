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

package fencing

import (
	"testing"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
)

// TestEveryEvidenceSourceHasAnAdapter keeps the descriptors and their
// adapters in step: a source the gate judges but nothing observes would
// never prove anything, and one that acts needs an adapter that performs.
func TestEveryEvidenceSourceHasAnAdapter(t *testing.T) {
	described := map[string]bool{}
	for _, source := range evidence.Sources {
		described[source.Name] = true
		adapter, ok := Adapters[source.Name]
		switch {
		case !ok:
			t.Errorf("evidence source %s has no adapter in Adapters", source.Name)
		case (source.Working != nil || source.TimedOut != nil) && adapter.Perform == nil:
			t.Errorf("evidence source %s acts, but its adapter performs nothing", source.Name)
		}
	}
	for name := range Adapters {
		if !described[name] {
			t.Errorf("adapter %s serves no evidence source of evidence.Sources", name)
		}
	}
}
