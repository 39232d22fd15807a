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
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// The FenceAgentsRemediation kind and the condition FAR sets once its fence
// agent has powered the node off.
const (
	FARAPIVersion      = "fence-agents-remediation.medik8s.io/v1alpha1"
	FARKind            = "FenceAgentsRemediation"
	FARFencedCondition = "FenceAgentActionSucceeded"
)

// FARRemediator is the template entry that accepts a FenceAgentsRemediation
// for the node, once its fence agent succeeded, as fencing evidence.
func FARRemediator() s3gwv1alpha1.RemediatorEvidence {
	return s3gwv1alpha1.RemediatorEvidence{APIVersion: FARAPIVersion, Kind: FARKind, ConditionType: FARFencedCondition}
}

// EnableFAR has a stand-in for fence-agents-remediation fence the nodes
// the selector matches: once such a node is not Ready, it creates a
// FenceAgentsRemediation for it (named after the node, with the node-name
// annotation, as NHC would) and, after delay, reports
// FenceAgentActionSucceeded=True as FAR does once the node is powered off.
// It never taints the node (FAR's ResourceDeletion strategy) and deletes
// the CR once the node is Ready again. It needs the cluster side.
func (e *Env) EnableFAR(selector map[string]string, delay time.Duration) error {
	if e.fencer == nil {
		return errors.New("the FAR stand-in runs with the emulated NodeHealthCheck only")
	}
	e.fencer.add(labels.SelectorFromSet(selector), delay)
	return nil
}

type farPool struct {
	selector labels.Selector
	delay    time.Duration
}

// farFencer is the FAR stand-in.
type farFencer struct {
	client client.Client
	nodes  client.Reader

	mu    sync.RWMutex
	pools []farPool
}

var _ reconcile.Reconciler = &farFencer{}

func (f *farFencer) add(selector labels.Selector, delay time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pools = append(f.pools, farPool{selector: selector, delay: delay})
}

func (f *farFencer) pool(node *corev1.Node) (farPool, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, p := range f.pools {
		if p.selector.Matches(labels.Set(node.Labels)) {
			return p, true
		}
	}
	return farPool{}, false
}

func (f *farFencer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := f.nodes.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	pool, ok := f.pool(node)
	if !ok {
		return reconcile.Result{}, nil
	}
	far := &unstructured.Unstructured{}
	far.SetAPIVersion(FARAPIVersion)
	far.SetKind(FARKind)
	err := f.client.Get(ctx, client.ObjectKey{Namespace: FARNamespace, Name: node.Name}, far)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("getting FenceAgentsRemediation %s: %w", node.Name, err)
	}

	ready := readyCondition(node)
	if ready == nil || ready.Status == corev1.ConditionTrue {
		if exists {
			return reconcile.Result{}, client.IgnoreNotFound(f.client.Delete(ctx, far))
		}
		return reconcile.Result{}, nil
	}
	if !exists {
		far = newFAR(node.Name)
		if err := f.client.Create(ctx, far); err != nil {
			return reconcile.Result{}, fmt.Errorf("creating FenceAgentsRemediation %s: %w", node.Name, err)
		}
	}
	if conditionTrue(far, FARFencedCondition) {
		return reconcile.Result{}, nil
	}
	if wait := pool.delay - time.Since(far.GetCreationTimestamp().Time); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	conds := []any{
		map[string]any{fieldType: "Processing", fieldStatus: "False", "reason": "RemediationFinishedSuccessfully", "message": "", "lastTransitionTime": now},
		map[string]any{fieldType: FARFencedCondition, fieldStatus: conditionTrueValue, "reason": "FenceAgentSucceeded", "message": "fence_ipmilan: node powered off", "lastTransitionTime": now},
	}
	if err := unstructured.SetNestedSlice(far.Object, conds, fieldStatus, "conditions"); err != nil {
		return reconcile.Result{}, err
	}
	if err := f.client.Status().Update(ctx, far); err != nil {
		return reconcile.Result{}, fmt.Errorf("reporting FenceAgentsRemediation %s fenced: %w", node.Name, err)
	}
	return reconcile.Result{}, nil
}

func newFAR(node string) *unstructured.Unstructured {
	far := &unstructured.Unstructured{Object: map[string]any{fieldSpec: map[string]any{
		"agent":               "fence_ipmilan",
		"remediationStrategy": "ResourceDeletion",
	}}}
	far.SetAPIVersion(FARAPIVersion)
	far.SetKind(FARKind)
	far.SetNamespace(FARNamespace)
	far.SetName(node)
	far.SetAnnotations(map[string]string{annotations.NodeNameAnnotation: node})
	return far
}

func conditionTrue(obj *unstructured.Unstructured, condType string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, fieldStatus, "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m[fieldType] == condType {
			return m[fieldStatus] == conditionTrueValue
		}
	}
	return false
}

func readyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}
