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
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// OutOfServiceTaint is the non-graceful node shutdown taint (KEP-2268).
var OutOfServiceTaint = corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// EnableOutOfServiceFencer has a fencer add OutOfServiceTaint to the nodes
// the selector matches the moment they are not Ready, and remove it once
// they are Ready again. No real fencer can be faster: this is the floor a
// remediation can reach, a benchmark's anchor. It proves nothing about the
// node (it is only NotReady), so nothing else may rely on it. It needs the
// cluster side.
func (e *Env) EnableOutOfServiceFencer(selector map[string]string) error {
	if e.oosFencer == nil {
		return errors.New("the out-of-service fencer runs with the emulated NodeHealthCheck only")
	}
	e.oosFencer.add(labels.SelectorFromSet(selector))
	return nil
}

// oosFencer is the out-of-service fencer.
type oosFencer struct {
	client client.Client
	nodes  client.Reader
	nodeSelectors
}

var _ reconcile.Reconciler = &oosFencer{}

// nodeSelectors are the node label selectors an actor of the cluster side
// was enabled for; it may be enabled for more while it runs.
type nodeSelectors struct {
	mu        sync.RWMutex
	selectors []labels.Selector
}

func (n *nodeSelectors) add(selector labels.Selector) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.selectors = append(n.selectors, selector)
}

func (n *nodeSelectors) selects(node *corev1.Node) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return slices.ContainsFunc(n.selectors, func(s labels.Selector) bool { return s.Matches(labels.Set(node.Labels)) })
}

func (f *oosFencer) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := f.nodes.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !f.selects(node) {
		return reconcile.Result{}, nil
	}
	ready := readyCondition(node)
	notReady := ready != nil && ready.Status != corev1.ConditionTrue
	tainted := slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&OutOfServiceTaint) })
	if notReady == tainted {
		return reconcile.Result{}, nil
	}
	base := node.DeepCopy()
	if notReady {
		node.Spec.Taints = append(node.Spec.Taints, OutOfServiceTaint)
	} else {
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&OutOfServiceTaint) })
	}
	// The optimistic lock keeps the node-lifecycle controller's taints.
	if err := f.client.Patch(ctx, node, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, fmt.Errorf("setting the out-of-service taint of Node %s to %v: %w", node.Name, notReady, err)
	}
	return reconcile.Result{}, nil
}

func readyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}
