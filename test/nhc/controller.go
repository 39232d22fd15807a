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

package nhc

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Controller runs an Emulator against a cluster as NHC runs: node events
// (through NHC's predicate) and update and delete events of its templates
// and CRs reconcile the whole NodeHealthCheck, and each pass says when to
// come back (timeouts, healthyDelay, storm cooldown).
type Controller struct {
	Emulator *Emulator
	// Nodes is the client nodes are listed with (NHC's cache); nil means
	// the Emulator's client.
	Nodes client.Reader
}

var _ reconcile.Reconciler = &Controller{}

// Reconcile runs one pass, whatever the request names.
func (c *Controller) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	nodes := c.Nodes
	if nodes == nil {
		nodes = c.Emulator.Client
	}
	requeue, err := c.Emulator.reconcile(ctx, nodes)
	return reconcile.Result{RequeueAfter: requeue}, err
}

// SetupWithManager watches what wakes NHC — its NodeHealthCheck (created or
// its spec changed), nodes, its templates and CRs — and maps it to the
// NodeHealthCheck.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	nhcRequest := []reconcile.Request{{NamespacedName: types.NamespacedName{Name: c.Emulator.Name}}}
	selectors := func() []metav1.LabelSelector { return []metav1.LabelSelector{c.Emulator.Selector} }
	b := ctrl.NewControllerManagedBy(mgr).
		Named("nhc-emulator-"+c.Emulator.Name).
		Watches(NodeHealthCheckObject(), handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if o.GetName() == c.Emulator.Name {
				return nhcRequest
			}
			return nil
		}), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return nhcRequest
		}), builder.WithPredicates(NodePredicate(selectors)))
	for _, gvk := range c.Emulator.WatchedKinds() {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		b = b.Watches(obj, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if c.Emulator.WokenBy(o) {
				return nhcRequest
			}
			return nil
		}), builder.WithPredicates(UpdatesAndDeletes))
	}
	return b.Complete(c)
}
