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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// The manager's identity as config/default installs it. The harness
// namespace for templates is the manager's namespace, as in docs/install.md.
const (
	ManagerNamespace      = TemplateNamespace
	ManagerServiceAccount = "s3gw-remediation-controller-manager"
	namePrefix            = "s3gw-remediation-"
	managerRoleFile       = "config/rbac/role.yaml"
	leaderElectionFile    = "config/rbac/leader_election_role.yaml"
)

// ManagerAuditPolicy is a kube-apiserver audit policy (for
// cluster.Options.AuditPolicy) that logs every write of the manager's
// ServiceAccount but its leader election Lease renewals, so that a test can
// count what the manager did (ManagerWrites).
func ManagerAuditPolicy() string {
	return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  resources:
  - group: coordination.k8s.io
    resources: [leases]
- level: Request
  users: ["` + testenv.ManagerUser + `"]
  verbs: [create]
  resources:
  - group: ""
    resources: [events]
  - group: events.k8s.io
    resources: [events]
- level: Metadata
  users: ["` + testenv.ManagerUser + `"]
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`
}

// installManagerIdentity gives the manager processes what config/default
// gives the Deployment, unless Options.InstallOperator did: the
// ServiceAccount, the generated ClusterRole and the leader election Role,
// bound to it; then installs the optional
// admission policies of config/policy, and writes a kubeconfig with a
// token of the ServiceAccount.
func (e *Env) installManagerIdentity(ctx context.Context) error {
	if e.opts.InstallOperator != nil {
		// The user's install made the ServiceAccount and its rights.
		var err error
		e.managerKubeconfig, err = e.Cluster.ServiceAccountKubeconfig(ctx, ManagerNamespace, ManagerServiceAccount)
		return err
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	role, election := &rbacv1.ClusterRole{}, &rbacv1.Role{}
	for path, obj := range map[string]client.Object{managerRoleFile: role, leaderElectionFile: election} {
		data, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return err
		}
		if err := yaml.UnmarshalStrict(data, obj); err != nil {
			return fmt.Errorf("decoding %s: %w", path, err)
		}
		obj.SetName(namePrefix + obj.GetName())
	}
	election.Namespace = ManagerNamespace
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ManagerNamespace, Name: ManagerServiceAccount}}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ManagerNamespace, Name: ManagerServiceAccount}},
		role,
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: role.Kind, Name: role.Name},
			Subjects:   subjects,
		},
		election,
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ManagerNamespace, Name: election.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: election.Kind, Name: election.Name},
			Subjects:   subjects,
		},
	}
	for _, obj := range objs {
		if err := cluster.CreateIfAbsent(ctx, e.Client, obj); err != nil {
			return err
		}
	}

	cfg := e.Cluster.RESTConfig()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: testenv.ManagerUser}
	asManager, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return err
	}
	if err := testenv.InstallManagerPolicy(ctx, e.Client, asManager); err != nil {
		return err
	}
	if err := e.checkPolicyTypes(ctx); err != nil {
		return err
	}
	e.managerKubeconfig, err = e.Cluster.ServiceAccountKubeconfig(ctx, ManagerNamespace, ManagerServiceAccount)
	return err
}

// checkPolicyTypes waits for kube-controller-manager to type-check the
// admission policies against the API's schemas (envtest has no
// kube-controller-manager, so only this cluster can) and fails on any
// warning: a misspelt field would otherwise surface only as a runtime
// error that refuses the manager's writes.
func (e *Env) checkPolicyTypes(ctx context.Context) error {
	objs, err := testenv.ManagerPolicy()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if obj.GetKind() != "ValidatingAdmissionPolicy" {
			continue
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		var warnings []any
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
				return false, err
			}
			gen, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
			warnings, _, _ = unstructured.NestedSlice(got.Object, "status", "typeChecking", "expressionWarnings")
			return gen == got.GetGeneration(), nil
		})
		if err != nil {
			return fmt.Errorf("waiting for ValidatingAdmissionPolicy %s to be type-checked: %w", obj.GetName(), err)
		}
		if len(warnings) > 0 {
			return fmt.Errorf("ValidatingAdmissionPolicy %s does not type-check: %v", obj.GetName(), warnings)
		}
	}
	return nil
}
