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
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func TestManagerLogLineTimes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		subSecond bool
	}{
		{name: "by default, to the nanosecond", subSecond: true},
		{name: "--zap-time-encoding=rfc3339, to the second", args: []string{"--zap-time-encoding=rfc3339"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := loggerOptions()
			fs := flag.NewFlagSet("manager", flag.ContinueOnError)
			opts.BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			zap.New(zap.UseFlagOptions(&opts), zap.WriteTo(&out)).Info("Force-deleting s3gw pod")
			var line struct {
				TS string `json:"ts"`
			}
			if err := json.Unmarshal(out.Bytes(), &line); err != nil {
				t.Fatalf("log line %q: %v", out.String(), err)
			}
			if _, err := time.Parse(time.RFC3339Nano, line.TS); err != nil {
				t.Fatalf("ts %q is not RFC 3339: %v", line.TS, err)
			}
			if got := strings.Contains(line.TS, "."); got != tc.subSecond {
				t.Errorf("ts %q has a fraction of a second: %v, want %v", line.TS, got, tc.subSecond)
			}
		})
	}
}
