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

package controllers

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

var (
	env       *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	// nhcClient acts as NodeHealthCheck: it impersonates NHC's service
	// account bound only to the shipped aggregation ClusterRole.
	nhcClient client.Client
	// managerClient acts as the operator's service account bound only to
	// the generated config/rbac/role.yaml and held by config/policy's
	// admission policies, proving the RBAC markers suffice and the policies
	// allow every write the manager makes.
	managerClient client.Client
	suiteCtx      context.Context
	cancel        context.CancelFunc
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controllers Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	suiteCtx, cancel = context.WithCancel(context.Background())
	started, err := testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	env, cfg, k8sClient = started.Env, started.Config, started.Client
	nhcClient = impersonateNHC()
	managerClient = impersonateManager()
	// Every story runs under the optional admission policies too: they
	// must allow each write the manager makes.
	Expect(testenv.InstallManagerPolicy(suiteCtx, k8sClient, managerClient)).To(Succeed())
})

var _ = AfterSuite(func() {
	cancel()
	Expect(env.Stop()).To(Succeed())
})

// impersonateManager binds the manager's service account to the manager
// ClusterRole generated from the +kubebuilder:rbac markers, and returns a
// client acting as it.
func impersonateManager() client.Client {
	data, err := readRepoFile("config/rbac/role.yaml")
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.Unmarshal(data, role)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, role)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "manager-role"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: testenv.ManagerUser}},
	})).To(Succeed())
	impersonated := rest.CopyConfig(cfg)
	impersonated.Impersonate = rest.ImpersonationConfig{UserName: testenv.ManagerUser}
	c, err := client.New(impersonated, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// impersonateNHC binds NHC's service account to config/rbac's aggregation
// ClusterRole (envtest runs no aggregation controller) and returns a client
// acting as it, so a verb missing from the role fails the tests.
func impersonateNHC() client.Client {
	data, err := readRepoFile("config/rbac/external_remediation_clusterrole.yaml")
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.UnmarshalStrict(data, role)).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, role)).To(Succeed())
	// NHC also manages its leases and reads nodes; grant those separately,
	// as NHC's own role does.
	own := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "nhc-own"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"create", "get"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
	}}
	Expect(k8sClient.Create(suiteCtx, own)).To(Succeed())
	// fence-agents-remediation ships its own ext-remediation ClusterRole;
	// escalation stories use FAR steps.
	far := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "far-ext-remediation"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"fence-agents-remediation.medik8s.io"}, Resources: []string{"fenceagentsremediationtemplates"},
			Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"fence-agents-remediation.medik8s.io"}, Resources: []string{"fenceagentsremediations"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	}}
	Expect(k8sClient.Create(suiteCtx, far)).To(Succeed())
	const user = "system:serviceaccount:nhc-system:node-healthcheck-controller-manager"
	for _, name := range []string{role.Name, own.Name, far.Name} {
		Expect(k8sClient.Create(suiteCtx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "nhc-" + name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})).To(Succeed())
	}
	impersonated := rest.CopyConfig(cfg)
	impersonated.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(impersonated, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}
