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

package harness

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// The demo prints the shipped NodeHealthCheck's wait for a lost node.
func TestShippedUnhealthyDurationIsTheShippedNodeHealthChecks(t *testing.T) {
	g := NewWithT(t)
	def, err := ShippedNodeHealthCheck()
	g.Expect(err).NotTo(HaveOccurred())
	d, ok := def.Duration(corev1.NodeReady, corev1.ConditionUnknown)
	g.Expect(ok).To(BeTrue(), "%s has an unhealthy condition Ready=Unknown", ShippedNodeHealthCheckFile)
	g.Expect(d).To(Equal(ShippedUnhealthyDuration))
}

// With Options.ShippedNodeHealthCheck, a benchmark's NodeHealthCheck is
// the shipped one narrowed to its pool; an UnhealthyDuration replaces
// only Ready=Unknown's.
func TestShippedNodeHealthCheckNarrowedToAPool(t *testing.T) {
	g := NewWithT(t)
	def, err := ShippedNodeHealthCheck()
	g.Expect(err).NotTo(HaveOccurred())
	pool := map[string]string{"bench.s3gw.io/mode": "controller-detach"}

	em := &nhc.Emulator{}
	g.Expect(shipped(em, pool, 0)).To(Succeed())
	g.Expect(em.UnhealthyConditions).To(Equal(def.UnhealthyConditions))
	selector, err := metav1.LabelSelectorAsSelector(&em.Selector)
	g.Expect(err).NotTo(HaveOccurred())
	shippedSelector, err := metav1.LabelSelectorAsSelector(&def.Selector)
	g.Expect(err).NotTo(HaveOccurred())
	for _, nodeLabels := range []labels.Set{
		{"kubernetes.io/os": "linux", "bench.s3gw.io/mode": "controller-detach", "node-role.kubernetes.io/control-plane": "true"},
		{"kubernetes.io/os": "linux", "bench.s3gw.io/mode": "none"},
		{"bench.s3gw.io/mode": "controller-detach"},
	} {
		inPool := nodeLabels["bench.s3gw.io/mode"] == "controller-detach"
		g.Expect(selector.Matches(nodeLabels)).To(Equal(inPool && shippedSelector.Matches(nodeLabels)), "%v", nodeLabels)
	}

	g.Expect(shipped(em, pool, 10*time.Second)).To(Succeed())
	for _, c := range em.UnhealthyConditions {
		want, _ := def.Duration(c.Type, c.Status)
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown {
			want = 10 * time.Second
		}
		g.Expect(c.Duration).To(Equal(want), "%s=%s", c.Type, c.Status)
	}
}
