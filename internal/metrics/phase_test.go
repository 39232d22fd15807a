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

func TestSetPhaseKeepsOneSeriesPerRemediation(t *testing.T) {
	g, reg := gomega.NewWithT(t), prometheus.NewRegistry()
	r := New(reg)
	// NHC names a remediation after its node.
	a, b := types.NamespacedName{Namespace: "ops", Name: "node-a"}, types.NamespacedName{Namespace: "ops", Name: "node-b"}

	r.SetPhase(a, "node-a", "WaitingForFencing")
	r.SetPhase(b, "node-b", "WaitingForStorage")
	r.SetPhase(a, "node-a", "WaitingForFencing") // a pass that changed nothing
	g.Expect(series(g, reg, "s3gw_remediation_remediation_phase")).To(gomega.Equal([]string{
		"namespace=ops,node=node-a,phase=WaitingForFencing,remediation=node-a 1",
		"namespace=ops,node=node-b,phase=WaitingForStorage,remediation=node-b 1",
	}))

	r.SetPhase(a, "node-a", "Succeeded")
	r.ForgetPhase(b)
	r.ForgetPhase(types.NamespacedName{Namespace: "ops", Name: "never-seen"})
	g.Expect(series(g, reg, "s3gw_remediation_remediation_phase")).To(gomega.Equal([]string{
		"namespace=ops,node=node-a,phase=Succeeded,remediation=node-a 1",
	}), "the old phase's series is gone, and so is a deleted remediation's")
}
