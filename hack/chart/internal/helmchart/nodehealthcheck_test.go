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

package helmchart_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/nodehealthcheck"
)

// TestDefaultsCreateTheShippedNodeHealthCheck: with NodeHealthCheck
// installed, the defaults render config/nodehealthcheck's NodeHealthCheck,
// its template reference moved into the release's namespace.
func TestDefaultsCreateTheShippedNodeHealthCheck(t *testing.T) {
	g := gomega.NewWithT(t)
	const release = "s3gw-elsewhere"
	ch, err := helmchart.Load(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	objs, notes, err := helmchart.Render(ch, release, nil, helmchart.NodeHealthCheckAPI)
	g.Expect(err).NotTo(gomega.HaveOccurred())

	shipped, err := nodehealthcheck.Load(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	want := shipped.Object.DeepCopy()
	g.Expect(unstructured.SetNestedField(want.Object, release, "spec", "remediationTemplate", "namespace")).To(gomega.Succeed())
	got := find(objs, "NodeHealthCheck", shipped.Object.GetName())
	g.Expect(got).NotTo(gomega.BeNil(), "the defaults create NodeHealthCheck %s", shipped.Object.GetName())
	if diff := cmp.Diff(withoutHelmLabels(want), withoutHelmLabels(got)); diff != "" {
		t.Errorf("the chart's NodeHealthCheck differs from %s (-shipped +chart):\n%s", nodehealthcheck.Source, diff)
	}
	g.Expect(find(objs, "S3GWRemediationTemplate", nodehealthcheck.TemplateName)).NotTo(gomega.BeNil(), "the template it references")
	g.Expect(notes).To(gomega.ContainSubstring("NodeHealthCheck " + shipped.Object.GetName() + " watches"))
}

// TestNoNodeHealthCheckWithoutItsAPI: where NodeHealthCheck is not
// installed the chart installs the operator without one and its notes say
// how to get it.
func TestNoNodeHealthCheckWithoutItsAPI(t *testing.T) {
	g := gomega.NewWithT(t)
	ch, err := helmchart.Load(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	objs, notes, err := helmchart.Render(ch, namespace, nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, u := range objs {
		g.Expect(u.GetKind()).NotTo(gomega.Equal("NodeHealthCheck"))
	}
	g.Expect(find(objs, "Deployment", "s3gw-remediation-controller-manager")).NotTo(gomega.BeNil(), "the operator installs")
	g.Expect(notes).To(gomega.And(gomega.ContainSubstring("NodeHealthCheck is not installed"),
		gomega.ContainSubstring("install-k3s.md#1-nodehealthcheck-through-olm"), gomega.ContainSubstring("helm upgrade")))

	_, notes, err = helmchart.Render(ch, namespace, values(t, "nodeHealthCheck: {enabled: false}"), helmchart.NodeHealthCheckAPI)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(notes).To(gomega.ContainSubstring("nodeHealthCheck.enabled is false"))
}

// TestNodeHealthCheckValuesRefuseNull: a null or empty selector or list of
// conditions is a schema error naming the value, not a NodeHealthCheck
// with `selector: null` or a YAML error.
func TestNodeHealthCheckValuesRefuseNull(t *testing.T) {
	ch, err := helmchart.Load(root(t))
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		"nodeHealthCheck: {selector: null}": "selector",
		// Helm merges a map into the default, but null takes a key away.
		"nodeHealthCheck: {selector: {matchLabels: null}}": "selector",
		"nodeHealthCheck: {unhealthyConditions: null}":     "unhealthyConditions",
		"nodeHealthCheck: {unhealthyConditions: []}":       "unhealthyConditions",
		"nodeHealthCheck: {minHealthy: null}":              "minHealthy",
	} {
		t.Run(doc, func(t *testing.T) {
			g := gomega.NewWithT(t)
			_, _, err := helmchart.Render(ch, namespace, values(t, doc), helmchart.NodeHealthCheckAPI)
			g.Expect(err).To(gomega.MatchError(gomega.And(gomega.ContainSubstring("values don't meet the specifications of the schema"),
				gomega.ContainSubstring(want))))
		})
	}
}
