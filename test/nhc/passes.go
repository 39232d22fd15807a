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

package nhc

import (
	"slices"
	"time"
)

// Pass is one run of the NodeHealthCheck's reconcile, for benchmarks: NHC
// runs one at a time per NodeHealthCheck, so how long each takes bounds
// how soon a node that turned unhealthy gets its CR.
type Pass struct {
	Began time.Time
	Took  time.Duration
	// CRLists are the live LISTs of remediation CRs the pass made (one per
	// healthy node and remediation kind, as NHC's client makes them).
	CRLists int
}

// Passes are the passes so far, in order, on the wall clock.
func (e *Emulator) Passes() []Pass {
	e.passMu.Lock()
	defer e.passMu.Unlock()
	return slices.Clone(e.passes)
}

// beginPass starts timing a pass; the returned func records it.
func (e *Emulator) beginPass() func() {
	began, lists := time.Now(), e.crLists.Load()
	return func() {
		p := Pass{Began: began, Took: time.Since(began), CRLists: int(e.crLists.Load() - lists)}
		e.passMu.Lock()
		e.passes = append(e.passes, p)
		e.passMu.Unlock()
	}
}
