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
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ForceDelete deletes the pod at once (grace period 0), only if it is still
// the pod with this UID. A pod already gone counts as deleted; it returns
// whether this call deleted it. A UID mismatch (a StatefulSet's namesake)
// is returned as an error: the next pass sees the target gone.
func ForceDelete(ctx context.Context, c client.Client, namespace, name string, uid types.UID) (bool, error) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	err := c.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("force-deleting pod %s/%s: %w", namespace, name, err)
	}
}
