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
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestSettingOn(t *testing.T) {
	tests := []struct {
		value string
		on    bool
	}{
		{"true", true},
		{"True", true},
		{"1", true},
		{"false", false},
		{"0", false},
		{"", false},
		{"yes", false}, // longhorn-manager fails to parse it and salvages nothing
		{`{"v1":"true"}`, false},
	}
	for _, tt := range tests {
		if got := SettingOn(tt.value); got != tt.on {
			t.Errorf("SettingOn(%q) = %v, want %v", tt.value, got, tt.on)
		}
	}
}

// settingReader serves one Get: the Setting it holds, or an error.
type settingReader struct {
	setting *Setting
	err     error
	asked   client.ObjectKey
}

func (r *settingReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.asked = key
	if r.err != nil {
		return r.err
	}
	r.setting.DeepCopyInto(obj.(*Setting))
	return nil
}

func (r *settingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not listed")
}

func TestAutoSalvage(t *testing.T) {
	gr := schema.GroupResource{Group: GroupVersion.Group, Resource: "settings"}
	broken := errors.New("connection refused")
	tests := []struct {
		name    string
		reader  *settingReader
		on      bool
		wantErr error
	}{
		{"on", &settingReader{setting: &Setting{Value: "true"}}, true, nil},
		{"off", &settingReader{setting: &Setting{Value: "false"}}, false, nil},
		{"no such Setting", &settingReader{err: apierrors.NewNotFound(gr, SettingAutoSalvage)}, false, nil},
		{"Setting kind not served", &settingReader{err: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: GroupVersion.Group, Kind: "Setting"}}}, false, nil},
		{"read fails", &settingReader{err: broken}, false, broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			on, err := State{Reader: tt.reader, Namespace: "longhorn-system"}.AutoSalvage(context.Background())
			if on != tt.on || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("AutoSalvage() = %v, %v; want %v, %v", on, err, tt.on, tt.wantErr)
			}
			if want := (client.ObjectKey{Namespace: "longhorn-system", Name: "auto-salvage"}); tt.reader.asked != want {
				t.Errorf("read %v, want %v", tt.reader.asked, want)
			}
		})
	}
}
