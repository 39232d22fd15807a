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

package workloads

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

func TestCovered(t *testing.T) {
	cached := labels.SelectorFromSet(labels.Set{"app.kubernetes.io/name": "s3gw"})
	spec := func(sel *s3gwv1alpha1.LabelSelector) s3gwv1alpha1.S3GWRemediationSpec {
		return s3gwv1alpha1.S3GWRemediationSpec{WorkloadSelector: sel}
	}
	tests := []struct {
		name    string
		spec    s3gwv1alpha1.S3GWRemediationSpec
		cached  labels.Selector
		covered bool
	}{
		{"the default selector", spec(nil), cached, true},
		{"the cached label and more", spec(&s3gwv1alpha1.LabelSelector{MatchLabels: map[string]s3gwv1alpha1.LabelValue{
			"app.kubernetes.io/name": "s3gw", "app.kubernetes.io/instance": "prod"}}), cached, true},
		{"an In within the cached value", spec(&s3gwv1alpha1.LabelSelector{MatchExpressions: []s3gwv1alpha1.LabelSelectorRequirement{
			{Key: "app.kubernetes.io/name", Operator: metav1.LabelSelectorOpIn, Values: []s3gwv1alpha1.LabelValue{"s3gw"}}}}), cached, true},
		{"an In wider than the cached value", spec(&s3gwv1alpha1.LabelSelector{MatchExpressions: []s3gwv1alpha1.LabelSelectorRequirement{
			{Key: "app.kubernetes.io/name", Operator: metav1.LabelSelectorOpIn, Values: []s3gwv1alpha1.LabelValue{"s3gw", "minio"}}}}), cached, false},
		{"another value", spec(&s3gwv1alpha1.LabelSelector{MatchLabels: map[string]s3gwv1alpha1.LabelValue{"app.kubernetes.io/name": "minio"}}), cached, false},
		{"other labels only", spec(&s3gwv1alpha1.LabelSelector{MatchLabels: map[string]s3gwv1alpha1.LabelValue{"app": "s3gw"}}), cached, false},
		{"an Exists cache with a value", spec(&s3gwv1alpha1.LabelSelector{MatchLabels: map[string]s3gwv1alpha1.LabelValue{"tier": "x"}}),
			labels.SelectorFromSet(nil).Add(mustRequirement(t, "tier")), true},
		{"no cache restriction", spec(&s3gwv1alpha1.LabelSelector{MatchLabels: map[string]s3gwv1alpha1.LabelValue{"app": "x"}}), labels.Everything(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(Covered(tt.spec, tt.cached)).To(Equal(tt.covered))
		})
	}
}

func mustRequirement(t *testing.T, key string) labels.Requirement {
	r, err := labels.NewRequirement(key, "exists", nil)
	if err != nil {
		t.Fatal(err)
	}
	return *r
}
