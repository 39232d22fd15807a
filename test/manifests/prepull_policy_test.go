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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// gatewayNamespace holds the gateway whose DaemonSets the tests write.
const gatewayNamespace = "policy-gateway"

// prePullDaemonSet is the DaemonSet internal/prepull builds for a gateway.
func prePullDaemonSet(mechanism s3gwv1alpha1.PrePullMechanism) *appsv1.DaemonSet {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: gatewayNamespace, Name: "gw",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "s3gw", UID: "uid", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "worker-1", Containers: []corev1.Container{{Name: "s3gw", Image: "quay.io/s3gw/s3gw:v0.99"}}}}
	gw, ok := prepull.GatewayOf(pod)
	Expect(ok).To(BeTrue())
	ds := prepull.DaemonSet(prepull.Input{Gateway: gw, Pod: pod, ProgramImage: "quay.io/s3gw/s3gw-remediation:v0.1.0",
		Spec: s3gwv1alpha1.PrePullSpec{Enabled: true, Mechanism: mechanism}})
	ds.OwnerReferences = nil // no StatefulSet here
	return ds
}

var _ = Describe("The pre-pull DaemonSet policy (config/policy)", Ordered, func() {
	var manager client.Client
	BeforeAll(func() {
		role := &rbacv1.ClusterRole{}
		load("config/rbac/role.yaml", role)
		role.Name = "prepull-policy-test-manager-role"
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "prepull-policy-test-manager"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: testenv.ManagerUser}},
		})).To(Succeed())
		impersonated := rest.CopyConfig(cfg)
		impersonated.Impersonate = rest.ImpersonationConfig{UserName: testenv.ManagerUser}
		var err error
		manager, err = client.New(impersonated, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		Expect(testenv.InstallManagerPolicy(ctx, k8sClient, manager)).To(Succeed())
		ensureNamespace(gatewayNamespace)
	})

	It("allows creating, updating and deleting the DaemonSets internal/prepull builds, by either mechanism", func() {
		for _, mechanism := range []s3gwv1alpha1.PrePullMechanism{s3gwv1alpha1.PrePullInitContainer, s3gwv1alpha1.PrePullImageVolume} {
			ds := prePullDaemonSet(mechanism)
			Expect(manager.Create(ctx, ds)).To(Succeed(), string(mechanism))
			next := prePullDaemonSet(s3gwv1alpha1.PrePullInitContainer)
			next.ResourceVersion = ds.ResourceVersion
			next.Spec.Template.Spec.InitContainers[1].Image = "quay.io/s3gw/s3gw:v1.0"
			Expect(manager.Update(ctx, next)).To(Succeed(), string(mechanism))
			Expect(manager.Delete(ctx, next)).To(Succeed(), string(mechanism))
		}
	})

	DescribeTable("refuses",
		func(change func(*appsv1.DaemonSet), message string) {
			ds := prePullDaemonSet(s3gwv1alpha1.PrePullInitContainer)
			change(ds)
			err := manager.Create(ctx, ds)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("a DaemonSet without the pre-pull label", func(ds *appsv1.DaemonSet) { delete(ds.Labels, prepull.Label) },
			"may only write DaemonSets labelled"),
		Entry("a host path", func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.Volumes = append(ds.Spec.Template.Spec.Volumes, corev1.Volume{Name: "root",
				VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}, "may only run pre-pull pods as non-root"),
		Entry("a Secret", func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.Volumes = append(ds.Spec.Template.Spec.Volumes, corev1.Volume{Name: "creds",
				VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s3gw-creds"}}})
		}, "may only run pre-pull pods as non-root"),
		Entry("the host's network", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.HostNetwork = true },
			"may only run pre-pull pods as non-root"),
		Entry("a service account token", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.AutomountServiceAccountToken = nil },
			"may only run pre-pull pods as non-root"),
		Entry("a privileged init container", func(ds *appsv1.DaemonSet) {
			sc := ds.Spec.Template.Spec.InitContainers[1].SecurityContext
			sc.Privileged, sc.AllowPrivilegeEscalation = ptr.To(true), ptr.To(true)
		}, "may only run pre-pull containers unprivileged"),
		Entry("an added capability", func(ds *appsv1.DaemonSet) {
			ds.Spec.Template.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
		}, "may only run pre-pull containers unprivileged"),
	)

	It("refuses to change or delete a DaemonSet without the label", func() {
		other := prePullDaemonSet(s3gwv1alpha1.PrePullInitContainer)
		other.Name = "someone-elses"
		delete(other.Labels, prepull.Label)
		Expect(k8sClient.Create(ctx, other)).To(Succeed(), "other users are not held")
		err := manager.Delete(ctx, other)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
		other.Labels[prepull.Label] = "someone-elses"
		err = manager.Update(ctx, other)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
	})
})
