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

package worldmodel

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// The neighbours' settings that decide whether they move a volume off a
// lost node, or serve it, without the operator. docs/safety.md §7 advises
// changing two of them; the model runs each as its upstream code does,
// with the default value or the other one:
//
//   - kube-controller-manager --disable-force-detach-on-timeout (default
//     false): k8s.io/kubernetes v1.37.2
//     pkg/controller/volume/attachdetach/reconciler/reconciler.go,
//     reconciler.reconcile: forceDetach := !isHealthy &&
//     maxWaitForUnmountDurationExpired && !disableForceDetachOnTimeout; a
//     volume the node still mounts is then detached only with the
//     out-of-service taint (attachdetach.go, adcDetach).
//   - Longhorn auto-salvage (default true): longhorn-manager
//     controller/volume_controller.go, ReconcileVolumeState: with every
//     replica failed the volume is faulted either way; only with the
//     setting does it set the engine's salvageRequested and, once
//     detached, clear the failedAt of the replicas that failed last
//     (longhorn_volume.go, autoSalvage). Off, the volume stays faulted
//     until someone salvages it by hand: nothing is served, and nothing
//     stale.
//   - Longhorn replica-replenishment-wait-interval (default 600 s):
//     controller/volume_controller.go replenishReplicas and
//     scheduler/replica_scheduler.go RequireNewReplica,
//     timeToReplacementReplica: a degraded attached volume whose failed
//     replicas cannot be reused gets a new replica, rebuilt from the
//     engine, once the volume has been degraded that long; with no failed
//     replica that may be reused, at once (longhorn_volume.go,
//     replenishReplicas).

// NeighbourSettings are an episode's settings of the neighbours; the zero
// value is the upstream defaults, the settings of a cluster nobody tuned
// (cmd/kube-controller-manager/app/options/attachdetachcontroller.go;
// longhorn-manager types/setting.go SettingDefinitionAutoSalvage,
// SettingDefinitionReplicaReplenishmentWaitInterval).
type NeighbourSettings struct {
	// DisableForceDetachOnTimeout is kube-controller-manager's
	// --disable-force-detach-on-timeout (default false).
	DisableForceDetachOnTimeout bool
	// AutoSalvageOff is Longhorn's auto-salvage set to false (default
	// true).
	AutoSalvageOff bool
	// ReplenishWithoutWait is Longhorn's
	// replica-replenishment-wait-interval set to 0 (default 600 s).
	ReplenishWithoutWait bool
}

// defaultReplenishmentWait is replica-replenishment-wait-interval's default.
const defaultReplenishmentWait = 600 * time.Second

// replicaReplenishmentWait is the setting's value.
func (s NeighbourSettings) replicaReplenishmentWait() time.Duration {
	if s.ReplenishWithoutWait {
		return 0
	}
	return defaultReplenishmentWait
}

// neighbourSetting is one setting: its name (as its owner spells it), its
// two values in the model, the upstream default first, and the field of
// NeighbourSettings that is set for the other.
type neighbourSetting struct {
	name   string
	values [2]string
	field  func(*NeighbourSettings) *bool
}

var neighbourSettings = []neighbourSetting{
	{"disable-force-detach-on-timeout", [2]string{"false", "true"},
		func(s *NeighbourSettings) *bool { return &s.DisableForceDetachOnTimeout }},
	{"auto-salvage", [2]string{"true", "false"},
		func(s *NeighbourSettings) *bool { return &s.AutoSalvageOff }},
	{"replica-replenishment-wait-interval", [2]string{"600", "0"},
		func(s *NeighbourSettings) *bool { return &s.ReplenishWithoutWait }},
}

// get is the setting's value in s.
func (n neighbourSetting) get(s NeighbourSettings) string {
	if *n.field(&s) {
		return n.values[1]
	}
	return n.values[0]
}

// set sets the setting to one of its two values.
func (n neighbourSetting) set(s *NeighbourSettings, value string) error {
	switch value {
	case n.values[0]:
		*n.field(s) = false
	case n.values[1]:
		*n.field(s) = true
	default:
		return fmt.Errorf("the model knows %s or %s, not %q", n.values[0], n.values[1], value)
	}
	return nil
}

// generateNeighbours draws each setting, its default or the other value
// with even odds; it draws the same numbers whatever the hazards, and
// from the late randomness, so that the rest of the episode stays as it
// was before the settings existed.
func generateNeighbours(r *rand.Rand) NeighbourSettings {
	var s NeighbourSettings
	for _, n := range neighbourSettings {
		*n.field(&s) = chance(r, 0.5)
	}
	return s
}

// String names every setting that is not its upstream default.
func (s NeighbourSettings) String() string {
	var out []string
	for _, n := range neighbourSettings {
		if v := n.get(s); v != n.values[0] {
			out = append(out, n.name+"="+v)
		}
	}
	if len(out) == 0 {
		return "upstream defaults"
	}
	return strings.Join(out, ",")
}

// NeighbourPins fix settings for every episode of a run
// (WORLDMODEL_NEIGHBOURS), whatever the draw: "name=value,…".
type NeighbourPins string

// parseNeighbourPins checks a WORLDMODEL_NEIGHBOURS value.
func parseNeighbourPins(v string) (NeighbourPins, error) {
	p := NeighbourPins(v)
	_, err := p.apply(NeighbourSettings{})
	return p, err
}

// apply sets the pinned settings.
func (p NeighbourPins) apply(s NeighbourSettings) (NeighbourSettings, error) {
	if p == "" {
		return s, nil
	}
	for _, pin := range strings.Split(string(p), ",") {
		name, value, ok := strings.Cut(pin, "=")
		i := -1
		for k, n := range neighbourSettings {
			if n.name == name {
				i = k
			}
		}
		if !ok || i < 0 {
			return s, fmt.Errorf("%q: want name=value with a name among %s", pin, neighbourSettingNames())
		}
		if err := neighbourSettings[i].set(&s, value); err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
	}
	return s, nil
}

func neighbourSettingNames() string {
	names := make([]string, len(neighbourSettings))
	for i, n := range neighbourSettings {
		names[i] = n.name
	}
	return strings.Join(names, ", ")
}
