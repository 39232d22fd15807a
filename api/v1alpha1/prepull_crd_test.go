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

package v1alpha1_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

var _ = Describe("S3GWRemediationTemplate spec.prePull", func() {
	template := func(name string, prePull map[string]any) *s3gwv1alpha1.S3GWRemediationTemplate {
		spec := map[string]any{"template": map[string]any{"spec": map[string]any{}}}
		if prePull != nil {
			spec["prePull"] = prePull
		}
		obj := newUnstructured("S3GWRemediationTemplate", name, spec)
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		got := &s3gwv1alpha1.S3GWRemediationTemplate{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
		return got
	}

	It("is off when left out, and a template without it stays as it was written", func() {
		t := template("no-prepull", nil)
		Expect(t.Spec.PrePull).To(Equal(s3gwv1alpha1.PrePullSpec{}))
		Expect(t.Spec.PrePull.MechanismOrDefault()).To(Equal(s3gwv1alpha1.PrePullInitContainer))
	})

	It("defaults the mechanism to init containers, as the Go default", func() {
		t := template("prepull", map[string]any{"enabled": true})
		Expect(t.Spec.PrePull).To(Equal(s3gwv1alpha1.PrePullSpec{Enabled: true, Mechanism: s3gwv1alpha1.PrePullInitContainer}))
	})

	DescribeTable("refuses",
		func(prePull map[string]any, message string) {
			obj := newUnstructured("S3GWRemediationTemplate", "refused", map[string]any{
				"template": map[string]any{"spec": map[string]any{}}, "prePull": prePull})
			err := k8sClient.Create(ctx, obj)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("an unknown mechanism", map[string]any{"enabled": true, "mechanism": "Sidecar"}, "spec.prePull.mechanism"),
		Entry("a PriorityClass name that is not a name", map[string]any{"enabled": true, "priorityClassName": "Low Priority"},
			"must be a PriorityClass name"),
	)
})
