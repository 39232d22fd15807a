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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// newUnstructured builds an object from raw fields, so tests can send what
// the Go types could not express (bad enums, missing fields).
func newUnstructured(kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(s3gwv1alpha1.GroupVersion.String())
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetName(name)
	return u
}

var _ = Describe("S3GWRemediation schema", func() {
	It("applies every default to an empty spec", func() {
		rem := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: "default"}}
		Expect(k8sClient.Create(ctx, rem)).To(Succeed())

		// The CRD's defaults and the Go ones (the OrDefault methods) must
		// not drift apart.
		spec := rem.Spec
		Expect(spec.WorkloadSelector).To(Equal(s3gwv1alpha1.DefaultWorkloadSelector()))
		Expect(spec.Fencing.Mode).To(Equal(s3gwv1alpha1.FencingModeRequireEvidence))
		Expect(spec.Fencing.OutOfServiceTaint).To(HaveValue(BeTrue()))
		Expect(spec.Fencing.StorageIsolation).To(HaveValue(BeTrue()))
		Expect(spec.Release.Strategy).To(Equal(s3gwv1alpha1.ReleaseControllerDetach))
		Expect(spec.Release.LonghornNamespace).To(Equal(s3gwv1alpha1.DefaultLonghornNamespace))
		Expect(spec.ReplacementTimeout).To(HaveValue(Equal(metav1.Duration{Duration: s3gwv1alpha1.DefaultReplacementTimeout})))
		Expect(spec.ReleaseTimeout).To(HaveValue(Equal(metav1.Duration{Duration: s3gwv1alpha1.DefaultReleaseTimeout})))
		empty := s3gwv1alpha1.S3GWRemediationSpec{}
		Expect(empty.WorkloadSelectorOrDefault()).To(Equal(spec.WorkloadSelector.Meta()))
		Expect(empty.Release.LonghornNamespaceOrDefault()).To(Equal(spec.Release.LonghornNamespace))
		Expect(empty.ReleaseTimeoutOrDefault()).To(Equal(spec.ReleaseTimeout.Duration))
		Expect(empty.ReplacementTimeoutOrDefault()).To(Equal(spec.ReplacementTimeout.Duration))
	})

	It("keeps an evidence source switched off", func() {
		rem := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Name: "no-taint", Namespace: "default"},
			Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{OutOfServiceTaint: ptr.To(false)}}}
		Expect(k8sClient.Create(ctx, rem)).To(Succeed())
		Expect(rem.Spec.Fencing.OutOfServiceTaint).To(HaveValue(BeFalse()))
		Expect(rem.Spec.Fencing.StorageIsolation).To(HaveValue(BeTrue()))
	})

	It("keeps a selector's labels and expressions, and hands them to label parsing unchanged", func() {
		obj := newUnstructured("S3GWRemediation", "selector", map[string]any{"workloadSelector": map[string]any{
			"matchLabels": map[string]any{"app.kubernetes.io/name": "s3gw"},
			"matchExpressions": []any{
				map[string]any{"key": "app.kubernetes.io/component", "operator": "In", "values": []any{"gateway"}},
				map[string]any{"key": "canary", "operator": "DoesNotExist"},
			}}})
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		rem := &s3gwv1alpha1.S3GWRemediation{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), rem)).To(Succeed())
		Expect(rem.Spec.WorkloadSelectorOrDefault()).To(Equal(&metav1.LabelSelector{
			MatchLabels: map[string]string{"app.kubernetes.io/name": "s3gw"},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app.kubernetes.io/component", Operator: metav1.LabelSelectorOpIn, Values: []string{"gateway"}},
				{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist},
			}}))
	})

	It("serves status as a subresource", func() {
		rem := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Name: "status", Namespace: "default"}}
		Expect(k8sClient.Create(ctx, rem)).To(Succeed())

		rem.Status.Phase = s3gwv1alpha1.PhaseWaitingForFencing
		rem.Status.NodeName = "worker-1"
		Expect(k8sClient.Status().Update(ctx, rem)).To(Succeed())

		// A main-resource update cannot change status.
		rem.Status.Phase = s3gwv1alpha1.PhaseSucceeded
		rem.Spec.Namespaces = []string{"s3gw"}
		Expect(k8sClient.Update(ctx, rem)).To(Succeed())

		got := &s3gwv1alpha1.S3GWRemediation{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rem), got)).To(Succeed())
		Expect(got.Status.Phase).To(Equal(s3gwv1alpha1.PhaseWaitingForFencing))
		Expect(got.Status.NodeName).To(Equal("worker-1"))
		Expect(got.Spec.Namespaces).To(ConsistOf("s3gw"))
	})

	It("shows Node, Phase, Succeeded and Age columns", func() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "s3gwremediations.s3gw-remediation.medik8s.io"}, crd)).To(Succeed())
		names := make([]string, 0, len(crd.Spec.Versions[0].AdditionalPrinterColumns))
		for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			names = append(names, col.Name)
		}
		Expect(names).To(Equal([]string{"Node", "Phase", "Succeeded", "Age"}))
		Expect(crd.Spec.Names.ShortNames).To(ContainElement("s3gwr"))
	})
})

var _ = Describe("S3GWRemediationTemplate schema", func() {
	It("declares spec.template.spec, which NHC and its console look for", func() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "s3gwremediationtemplates.s3gw-remediation.medik8s.io"}, crd)).To(Succeed())
		Expect(crd.Spec.Scope).To(Equal(apiextensionsv1.NamespaceScoped))
		schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		Expect(schema.Properties["spec"].Properties["template"].Properties).To(HaveKey("spec"))
	})

	It("defaults the template's spec like a remediation's", func() {
		obj := newUnstructured("S3GWRemediationTemplate", "defaulted", map[string]any{"template": map[string]any{"spec": map[string]any{}}})
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		template := &s3gwv1alpha1.S3GWRemediationTemplate{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), template)).To(Succeed())
		Expect(template.Spec.Template.Spec.Release.Strategy).To(Equal(s3gwv1alpha1.ReleaseControllerDetach))
		Expect(template.Spec.Template.Spec.Fencing.Mode).To(Equal(s3gwv1alpha1.FencingModeRequireEvidence))
		// The opt-out is written out as false, so the stored spec shows the risk is refused.
		accepts, found, err := unstructured.NestedBool(obj.Object, "spec", "template", "spec", "release",
			"acceptStaleReadsWithoutRevisionCounter")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
		Expect(accepts).To(BeFalse())
	})

	It("requires spec.template", func() {
		err := k8sClient.Create(ctx, newUnstructured("S3GWRemediationTemplate", "empty", map[string]any{}))
		Expect(err).To(MatchError(ContainSubstring("spec.template: Required value")))
	})

	It("keeps the protection report in a status subresource, shown as Protected, Status, RTO and Images columns", func() {
		obj := newUnstructured("S3GWRemediationTemplate", "reported", map[string]any{"template": map[string]any{"spec": map[string]any{}}})
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		template := &s3gwv1alpha1.S3GWRemediationTemplate{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), template)).To(Succeed())
		template.Status.Protection = "1/2"
		Expect(k8sClient.Status().Update(ctx, template)).To(Succeed())

		// A main-resource update cannot change status.
		template.Status.Protection = "2/2"
		template.Spec.Template.Spec.Namespaces = []string{"s3gw"}
		Expect(k8sClient.Update(ctx, template)).To(Succeed())
		got := &s3gwv1alpha1.S3GWRemediationTemplate{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
		Expect(got.Status.Protection).To(Equal("1/2"))
		Expect(got.Spec.Template.Spec.Namespaces).To(ConsistOf("s3gw"))

		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "s3gwremediationtemplates.s3gw-remediation.medik8s.io"}, crd)).To(Succeed())
		names := make([]string, 0, len(crd.Spec.Versions[0].AdditionalPrinterColumns))
		for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			names = append(names, col.Name+"="+col.JSONPath)
		}
		Expect(names).To(Equal([]string{"Protected=.status.protection",
			`Status=.status.conditions[?(@.type=="Protected")].reason`, "RTO=.status.expectedRTO",
			`Images=.status.conditions[?(@.type=="ImagesWarm")].reason`, "Age=.metadata.creationTimestamp"}))
	})
})
