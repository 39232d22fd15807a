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

package longhorn

import (
	"context"
	"errors"
	"strconv"
)

// SettingAutoSalvage is Longhorn's auto-salvage setting (longhorn-manager
// types/setting.go SettingNameAutoSalvage), "true" by default
// (SettingDefinitionAutoSalvage). With it on, once every replica of a
// volume has failed, Longhorn clears failedAt on the replicas on nodes that
// are up whose failedAt is within a minute of the latest among them, and
// serves them, stale or not (controller/volume_controller.go
// ReconcileVolumeState, the isAutoSalvageNeeded branch); with it off the
// volume stays faulted until a replica's node returns or someone salvages
// it by hand.
const SettingAutoSalvage = "auto-salvage"

// AutoSalvage reports whether Longhorn's auto-salvage setting is on, as far
// as it can be seen: false when the Setting kind is not served or there is
// no such Setting in the namespace (no longhorn-manager runs there: it
// creates every setting when it starts).
func (s State) AutoSalvage(ctx context.Context) (bool, error) {
	setting := &Setting{}
	found, err := s.get(ctx, SettingAutoSalvage, setting)
	switch {
	case errors.Is(err, ErrNotInstalled):
		return false, nil
	case err != nil || !found:
		return false, err
	}
	return SettingOn(setting.Value), nil
}

// SettingOn reads a boolean setting's value as longhorn-manager does
// (datastore/longhorn.go GetSettingAsBool: strconv.ParseBool). A value it
// cannot parse makes Longhorn fail the volume's reconcile before it
// salvages anything, so it counts as off.
func SettingOn(value string) bool {
	on, err := strconv.ParseBool(value)
	return err == nil && on
}
