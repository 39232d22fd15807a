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
	"regexp"
	"testing"

	"github.com/s3gw-tech/s3gw-remediation/version"
)

func TestMeasureCodeRecordsVersionAndCommit(t *testing.T) {
	stamped := version.Version
	version.Version = "1.2.3" // as make's -ldflags -X would
	t.Cleanup(func() { version.Version = stamped })

	c := measureCode("a note")
	if c.Version != "1.2.3" {
		t.Errorf("Version = %q, want the stamped 1.2.3", c.Version)
	}
	if !regexp.MustCompile(`^[0-9a-f]{12}(-dirty)?$`).MatchString(c.Commit) {
		t.Errorf("Commit = %q, want git's 12-digit abbreviation", c.Commit)
	}
	if want := "version 1.2.3, commit " + c.Commit + "; a note"; c.Code != want {
		t.Errorf("Code = %q, want %q", c.Code, want)
	}
}
