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
	"reflect"
	"strings"
	"testing"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/hack/internal/markers"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// TestEveryDescriptorIsWritten: each strategy reaches the enum, the chart
// form and the docs, and each source the CRD's rule and the docs, so a new
// descriptor needs no hand edit there.
func TestEveryDescriptorIsWritten(t *testing.T) {
	src, err := strategiesGo("")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range release.Strategies {
		for what, text := range map[string]string{"the enum": string(src), "the chart form": strategyOptions("4"),
			"the docs": strategiesTable()} {
			if !strings.Contains(text, string(s.Name)) {
				t.Errorf("strategy %s is missing from %s", s.Name, what)
			}
		}
		if s.NeedsProofOfShutdown != strings.Contains(strategyRules(), "'"+string(s.Name)+"'") {
			t.Errorf("strategy %s: the CRD's rule and NeedsProofOfShutdown disagree", s.Name)
		}
	}
	for _, s := range evidence.Sources {
		if !strings.Contains(sourceRule(), s.EnabledCEL) || !strings.Contains(sourcesTable(), "`"+s.Field+"`") {
			t.Errorf("source %s is missing from the CRD's rule or the docs", s.Name)
		}
	}
}

// TestSourceFieldsAreSpecFields: each source names a real spec.fencing
// field, the one its CEL test reads.
func TestSourceFieldsAreSpecFields(t *testing.T) {
	fields := map[string]bool{}
	typ := reflect.TypeOf(s3gwv1alpha1.FencingSpec{})
	for i := range typ.NumField() {
		fields[strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	for _, s := range evidence.Sources {
		if !fields[s.Field] || !strings.Contains(s.EnabledCEL, "self."+s.Field) {
			t.Errorf("source %s: field %q is not a spec.fencing field its CEL test reads", s.Name, s.Field)
		}
	}
}

func TestRegionsFillAndRefuseUnknownOnes(t *testing.T) {
	text := "a\n    # BEGIN descriptors strategy-options 4: x\n    - Stale\n    # END descriptors\nb\n"
	out, err := markers.Fill(text, tool, region)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\n    # BEGIN descriptors strategy-options 4: x\n" + strategyOptions("4") + "    # END descriptors\nb\n"; out != want {
		t.Errorf("filled:\n%s\nwant:\n%s", out, want)
	}
	again, err := markers.Fill(out, tool, region)
	if err != nil || again != out {
		t.Errorf("filling twice changed the text (%v)", err)
	}
	if _, err := markers.Fill("<!-- BEGIN descriptors nothing: x -->\n<!-- END descriptors -->\n", tool, region); err == nil {
		t.Error("an unknown region is not refused")
	}
}
