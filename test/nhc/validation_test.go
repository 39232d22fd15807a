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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidateEscalation checks NHC's webhook rules for escalations.
func TestValidateEscalation(t *testing.T) {
	f := newFixture(t)
	g := f.g
	scoped := NamespacedReader(f.c, f.ns)
	a := f.template(s3gwTemplate, "a", true)
	b := f.template(s3gwTemplate, "b", true)
	far := f.template(farTemplate, "far", false)
	far2 := f.template(farTemplate, "far2", false)

	g.Expect(ValidateEscalation(f.ctx, scoped, []Step{{Template: a, Order: 0, Timeout: time.Minute},
		{Template: b, Order: 1, Timeout: time.Minute}, {Template: far, Order: 2, Timeout: time.Minute}})).To(Succeed(),
		"two S3GW templates, both annotated")
	g.Expect(ValidateEscalation(f.ctx, scoped, []Step{{Template: far, Order: 0, Timeout: time.Minute},
		{Template: far2, Order: 1, Timeout: time.Minute}})).To(MatchError(ContainSubstring("duplicate template kind: FenceAgentsRemediationTemplate")))
	g.Expect(ValidateEscalation(f.ctx, scoped, []Step{{Template: a, Order: 1, Timeout: time.Minute},
		{Template: far, Order: 1, Timeout: time.Minute}})).To(MatchError(ContainSubstring("order must be unique")))
	g.Expect(ValidateEscalation(f.ctx, scoped, []Step{{Template: a, Order: 0, Timeout: 59 * time.Second}})).
		To(MatchError(ContainSubstring("at least one minute")))

	// Any template of the kind without the annotation, referenced or not,
	// makes NHC refuse a repeated kind.
	f.template(s3gwTemplate, "unrelated", false)
	g.Expect(ValidateEscalation(f.ctx, scoped, []Step{{Template: a, Order: 0, Timeout: time.Minute},
		{Template: b, Order: 1, Timeout: time.Minute}})).To(MatchError(ContainSubstring("duplicate template kind: S3GWRemediationTemplate")))

	e := &Emulator{Name: "invalid", Template: a, Escalation: []Step{{Template: b, Order: 0, Timeout: time.Minute}}}
	g.Expect(e.Validate(f.ctx, scoped)).To(And(MatchError(ContainSubstring("selector is mandatory")),
		MatchError(ContainSubstring("mutual exclusive"))))
	e = &Emulator{Name: "valid", Template: a, Selector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}
	g.Expect(e.Validate(f.ctx, scoped)).To(Succeed())
}
