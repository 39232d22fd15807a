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

import "time"

// NHC's storm recovery (nodehealthcheck_controller.go,
// evaluateStormRecovery): with spec.stormCooldownDuration set, a minHealthy
// violation starts a storm, and remediation stays off until the violation
// is over and the cooldown after it has passed. While it is off, nothing is
// created, timed out or renewed.

// StormActive reports NHC's StormActive and StormCooldownActive conditions.
func (e *Emulator) StormActive() (storm, cooldown bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.storm, e.cooldownSince != nil
}

// evaluateStorm returns whether the storm keeps remediation off and when to
// look again. The caller holds e.mu.
func (e *Emulator) evaluateStorm(minHealthyViolated bool) (bool, time.Duration) {
	if e.StormCooldownDuration == nil || (!minHealthyViolated && !e.storm) {
		return false, 0
	}
	if minHealthyViolated {
		// A new violation clears a running cooldown.
		e.cooldownSince = nil
		if !e.storm {
			e.storm = true
			e.record("Warning", "StormRecoveryStarted", "Storm recovery mode activated - delaying remediation until threshold is reached")
		}
		return true, 0
	}
	now := e.Clock.Now()
	if e.cooldownSince == nil {
		e.cooldownSince = &now
		e.record("Warning", "StormRecoveryCooldownStarted", "Storm recovery mode will exit after cooldown delay")
		return true, *e.StormCooldownDuration + time.Second
	}
	if left := e.cooldownSince.Add(*e.StormCooldownDuration).Sub(now); left > 0 {
		return true, left + time.Second
	}
	e.storm, e.cooldownSince = false, nil
	e.record("Normal", "StormRecoveryEnded", "Storm recovery mode deactivated - normal remediation resumed")
	return false, 0
}
