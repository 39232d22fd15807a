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

package manifests

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

var _ = Describe("The aggregation ClusterRole for NodeHealthCheck", func() {
	var nhc client.Client

	BeforeEach(func() {
		role := &rbacv1.ClusterRole{}
		load("config/rbac/external_remediation_clusterrole.yaml", role)
		Expect(role.Labels).To(HaveKeyWithValue("rbac.ext-remediation/aggregate-to-ext-remediation", "true"))
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, role))).To(Succeed())

		// NHC's service account, bound only to our role (envtest runs no
		// aggregation controller, so bind it directly).
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nhc-system"}}
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, ns))).To(Succeed())
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "nhc-ext-remediation"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "node-healthcheck-controller-manager",
				Namespace: ns.Name}},
		}
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, binding))).To(Succeed())

		impersonated := rest.CopyConfig(cfg)
		impersonated.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:nhc-system:node-healthcheck-controller-manager"}
		var err error
		nhc, err = client.New(impersonated, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
	})

	It("lets NHC list templates and create, update and delete remediations", func() {
		templates := &s3gwv1alpha1.S3GWRemediationTemplateList{}
		Expect(nhc.List(ctx, templates)).To(Succeed())

		rem := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", Namespace: "default"}}
		Expect(nhc.Create(ctx, rem)).To(Succeed())
		rem.Annotations = map[string]string{"remediation.medik8s.io/nhc-timed-out": "2026-11-30T00:00:00Z"}
		Expect(nhc.Update(ctx, rem)).To(Succeed())
		Expect(nhc.List(ctx, &s3gwv1alpha1.S3GWRemediationList{})).To(Succeed())
		Expect(nhc.Delete(ctx, rem)).To(Succeed())
	})

	It("gives NHC nothing outside our API", func() {
		err := nhc.List(ctx, &corev1.PodList{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing pods: %v", err)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "any", Namespace: "default"}}
		Expect(apierrors.IsForbidden(nhc.Delete(ctx, pod))).To(BeTrue())
		template := &s3gwv1alpha1.S3GWRemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "default"}}
		Expect(apierrors.IsForbidden(nhc.Create(ctx, template))).To(BeTrue(), "NHC must not create templates")
	})
})
