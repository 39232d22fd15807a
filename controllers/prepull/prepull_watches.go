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

package prepull

import (
	"context"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/internal/watches"
	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
)

// SetupWithManager wakes the reconciler on template spec changes, on the
// cached s3gw pods' changes that change their DaemonSet (node, images,
// scheduling, controller, deletion, end), and on the pre-pull DaemonSets'
// metadata (created, rewritten, deleted by anyone), read from prePull
// (NewCache). Every event maps to the one Request.
func (r *Reconciler) SetupWithManager(mgr manager.Manager, prePull cache.Cache) error {
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{Request}
	})
	return builder.ControllerManagedBy(mgr).
		Named("s3gwremediationtemplate-prepull").
		Watches(&s3gwv1alpha1.S3GWRemediationTemplate{}, one, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Pod{}, one, builder.WithPredicates(gatewayChanged)).
		WatchesRawSource(source.Kind(prePull, &appsv1.DaemonSet{},
			handler.TypedEnqueueRequestsFromMapFunc(func(context.Context, *appsv1.DaemonSet) []reconcile.Request {
				return []reconcile.Request{Request}
			}), daemonSetWritten)).
		Complete(r)
}

// gatewayChanged passes pod updates that change the gateway's DaemonSet or
// which pod is its Home; not readiness or claims.
var gatewayChanged = watches.Updated(func(old, updated *corev1.Pod) bool {
	return old.Spec.NodeName != updated.Spec.NodeName ||
		(old.DeletionTimestamp == nil) != (updated.DeletionTimestamp == nil) ||
		old.Status.Phase != updated.Status.Phase ||
		!maps.Equal(old.Labels, updated.Labels) ||
		!equality.Semantic.DeepEqual(metav1.GetControllerOf(old), metav1.GetControllerOf(updated)) ||
		!slices.Equal(prepull.Images(old), prepull.Images(updated))
})

// daemonSetWritten passes a DaemonSet's creation, deletion, and the updates
// that change what the operator wrote (not the DaemonSet controller's
// status updates).
var daemonSetWritten = predicate.TypedFuncs[*appsv1.DaemonSet]{
	CreateFunc:  func(event.TypedCreateEvent[*appsv1.DaemonSet]) bool { return true },
	DeleteFunc:  func(event.TypedDeleteEvent[*appsv1.DaemonSet]) bool { return true },
	GenericFunc: func(event.TypedGenericEvent[*appsv1.DaemonSet]) bool { return true },
	UpdateFunc: func(e event.TypedUpdateEvent[*appsv1.DaemonSet]) bool {
		return !maps.Equal(e.ObjectOld.Annotations, e.ObjectNew.Annotations) || !maps.Equal(e.ObjectOld.Labels, e.ObjectNew.Labels) ||
			(e.ObjectOld.DeletionTimestamp == nil) != (e.ObjectNew.DeletionTimestamp == nil)
	},
}
