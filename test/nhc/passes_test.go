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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// TestPassesCountLiveCRLists: every pass is recorded, with its live LISTs
// of remediation CRs: one for the orphans, then one per healthy node, per
// remediation kind (deleteOrphanedRemediationCRs, HandleHealthyNode).
func TestPassesCountLiveCRLists(t *testing.T) {
	f := newFixture(t)
	g := f.g
	e := f.classic("passes")
	for _, n := range []string{"h1", "h2", "h3"} {
		f.node(n, corev1.ConditionTrue)
	}
	f.pass(e)
	f.pass(e)
	passes := e.Passes()
	g.Expect(passes).To(HaveLen(2))
	for _, p := range passes {
		g.Expect(p.CRLists).To(Equal(1+3), "the orphans' LIST and one per healthy node, of the one remediation kind")
		g.Expect(p.Took).To(BeNumerically(">", 0))
	}
	g.Expect(passes[1].Began).NotTo(BeTemporally("<", passes[0].Began.Add(passes[0].Took)), "one pass at a time")
}
