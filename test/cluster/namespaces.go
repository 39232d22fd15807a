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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CreateNamespace creates a namespace and waits until pods can be created in
// it: the ServiceAccount admission plugin rejects pods until
// kube-controller-manager has made the default ServiceAccount, and a
// ReplicaSet controller that hits that backs off for seconds.
func (c *Cluster) CreateNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.client.Create(ctx, ns); err != nil {
		return fmt.Errorf("creating Namespace %s: %w", name, err)
	}
	if err := c.waitForDefaultServiceAccount(ctx, name); err != nil {
		return fmt.Errorf("waiting for the default ServiceAccount in %s: %w", name, err)
	}
	return nil
}
