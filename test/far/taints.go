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

package far

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FAR's taints (pkg/utils/taints.go): matched by key and effect whatever
// their value or who added them, written with a full Node Update.

// RemediationTaint is CreateRemediationTaint.
func RemediationTaint() corev1.Taint {
	return corev1.Taint{Key: NoScheduleTaintKey, Effect: corev1.TaintEffectNoSchedule}
}

// OutOfServiceTaintOf is CreateOutOfServiceTaint.
func OutOfServiceTaintOf() corev1.Taint {
	return corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
}

// appendTaint is AppendTaint: it adds the taint, stamped now, unless one
// with its key and effect is there; it reports whether it added it.
func appendTaint(ctx context.Context, c client.Client, node string, taint corev1.Taint) (bool, error) {
	n := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) }) {
		return false, nil
	}
	now := metav1.Now()
	taint.TimeAdded = &now
	n.Spec.Taints = append(n.Spec.Taints, taint)
	if err := c.Update(ctx, n); err != nil {
		return false, err
	}
	return true, nil
}

// removeTaint is RemoveTaint: it removes every taint with the key and
// effect.
func removeTaint(ctx context.Context, c client.Client, node string, taint corev1.Taint) error {
	n := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		return client.IgnoreNotFound(err)
	}
	kept := slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(t corev1.Taint) bool { return taint.MatchTaint(&t) })
	if len(kept) == len(n.Spec.Taints) {
		return nil
	}
	n.Spec.Taints = kept
	return c.Update(ctx, n)
}
