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

package metrics

import (
	"testing"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

func TestFencingBlockedCountsEachRemediationOnceAndExportsTheAlertedReason(t *testing.T) {
	g, reg := gomega.NewWithT(t), prometheus.NewRegistry()
	r := New(reg)
	const name = "s3gw_remediation_fencing_blocked"
	// The DelegateNotStarted alert reads a series before any remediation.
	g.Expect(series(g, reg, name)).To(gomega.Equal([]string{"reason=DelegateNotStarted 0"}))

	r.SetFencingBlocked(types.UID("a"), "DelegateNotStarted")
	r.SetFencingBlocked(types.UID("a"), "DelegateNotStarted") // a pass that changed nothing
	r.SetFencingBlocked(types.UID("b"), "OutOfServiceTaint")
	g.Expect(series(g, reg, name)).To(gomega.Equal([]string{
		"reason=DelegateNotStarted 1", "reason=OutOfServiceTaint 1",
	}))

	r.SetFencingBlocked(types.UID("a"), "OutOfServiceTaint")
	r.SetFencingBlocked(types.UID("b"), "")
	g.Expect(series(g, reg, name)).To(gomega.Equal([]string{
		"reason=DelegateNotStarted 0", "reason=OutOfServiceTaint 1",
	}))
}
