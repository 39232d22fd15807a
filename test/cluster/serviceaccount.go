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

package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// serviceAccountTokenSeconds outlives any test run; kube-apiserver signs
// the token with the cluster's key, so it stays valid across its restarts.
const serviceAccountTokenSeconds = 24 * 60 * 60

// ServiceAccountKubeconfig requests a token for the ServiceAccount (which
// must exist) and writes a kubeconfig that authenticates with it, as a pod
// running under that account would: the process then has exactly the
// account's RBAC, and admission sees its user name.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, namespace, name string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To[int64](serviceAccountTokenSeconds),
	}}
	if err := c.client.SubResource("token").Create(ctx, sa, req); err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	dir := filepath.Join(c.dir, "serviceaccounts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, namespace+"-"+name+".kubeconfig")
	user := "system:serviceaccount:" + namespace + ":" + name
	if err := c.creds.writeKubeconfigFor(path, user, req.Status.Token); err != nil {
		return "", err
	}
	return path, nil
}
