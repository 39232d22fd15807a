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

import "testing"

func TestSoftMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int64
		err  bool
	}{
		{name: "the shipped 256Mi limit", env: map[string]string{memoryLimitEnv: "268435456"}, want: 241591910},
		{name: "GOMEMLIMIT wins", env: map[string]string{memoryLimitEnv: "268435456", "GOMEMLIMIT": "100MiB"}},
		{name: "no container limit", env: map[string]string{}},
		{name: "not bytes", env: map[string]string{memoryLimitEnv: "256Mi"}, err: true},
		{name: "not positive", env: map[string]string{memoryLimitEnv: "0"}, err: true},
	} {
		got, why, err := softMemoryLimit(func(k string) string { return tc.env[k] })
		if got != tc.want || (err != nil) != tc.err || (err == nil && why == "") {
			t.Errorf("%s: softMemoryLimit = %d, %q, %v; want %d (error %v)", tc.name, got, why, err, tc.want, tc.err)
		}
	}
}

func TestGCPercentToSet(t *testing.T) {
	if got, why := gcPercentToSet(func(string) string { return "" }); got != gcPercent || why == "" {
		t.Errorf("without GOGC: %d, %q; want %d", got, why, gcPercent)
	}
	env := map[string]string{"GOGC": "200"}
	if got, why := gcPercentToSet(func(k string) string { return env[k] }); got != 0 || why == "" {
		t.Errorf("GOGC=200 given: %d, %q; want 0 (the runtime applied it)", got, why)
	}
}
