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

// Package watches holds what the reconcilers' watches share: watches on
// kinds found at run time, update predicates and event-to-request mapping.
package watches

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Dynamic starts watches on kinds that may not exist when the
// manager starts (Longhorn's, other remediators') once a pass reads them.
type Dynamic struct {
	controller controller.Controller
	cache      cache.Cache
	mapper     meta.RESTMapper
	scheme     *runtime.Scheme

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

func NewDynamic(mgr manager.Manager, c controller.Controller) *Dynamic {
	return &Dynamic{controller: c, cache: mgr.GetCache(), mapper: mgr.GetRESTMapper(),
		scheme: mgr.GetScheme(), watched: map[schema.GroupVersionKind]bool{}}
}

// Ensure watches obj's kind, mapped by toRequests and filtered by preds,
// unless it does already or the kind is not served. Safe on every pass.
func (w *Dynamic) Ensure(ctx context.Context, obj client.Object, toRequests handler.MapFunc, preds ...predicate.Predicate) {
	if w == nil {
		return
	}
	gvk, err := apiutil.GVKForObject(obj, w.scheme)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[gvk] {
		return
	}
	if _, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
		return // not served: nothing to watch, the backstop polls
	}
	src := source.Kind(w.cache, obj, handler.EnqueueRequestsFromMapFunc(toRequests), preds...)
	if err := w.controller.Watch(src); err != nil {
		logf.FromContext(ctx).Error(err, "Watching a kind found at run time", "kind", gvk.String())
		return
	}
	w.watched[gvk] = true
}

// Updated passes the updates of T for which changed holds, and every
// create, delete and generic event.
func Updated[T client.Object](changed func(old, updated T) bool) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(T)
		updated, newOK := e.ObjectNew.(T)
		return !oldOK || !newOK || changed(old, updated)
	}}
}

// ReadyCondition is the Ready condition without its heartbeat time.
func ReadyCondition(node *corev1.Node) corev1.NodeCondition {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			c.LastHeartbeatTime = node.CreationTimestamp
			return c
		}
	}
	return corev1.NodeCondition{}
}

// RequestsFor returns a request for each of the items match selects.
func RequestsFor[T any, PT interface {
	*T
	client.Object
}](items []T, match func(PT) bool) []reconcile.Request {
	var reqs []reconcile.Request
	for i := range items {
		if obj := PT(&items[i]); match(obj) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
	}
	return reqs
}
