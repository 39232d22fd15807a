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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
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
// (NewCache). Every event maps to the one Request, a batch later (wake).
func (r *Reconciler) SetupWithManager(mgr manager.Manager, prePull cache.Cache) error {
	return builder.ControllerManagedBy(mgr).
		Named("s3gwremediationtemplate-prepull").
		Watches(&s3gwv1alpha1.S3GWRemediationTemplate{}, wake[client.Object](r.batch()),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Pod{}, wake[client.Object](r.batch()), builder.WithPredicates(gatewayChanged)).
		WatchesRawSource(source.Kind(prePull, &appsv1.DaemonSet{}, wake[*appsv1.DaemonSet](r.batch()), daemonSetWritten)).
		Complete(r)
}

// DefaultBatch is how long a pass waits after the event that wakes it, so
// that one pass reads a burst of events: gateways deployed together, a
// failover's pods deleted and replaced, a rollout. Each pass reads every
// gateway, and passes that ran once per event were most of what the
// pre-pull reconciler allocated.
const DefaultBatch = time.Second

func (r *Reconciler) batch() time.Duration {
	if r.Batch > 0 {
		return r.Batch
	}
	return DefaultBatch
}

// wake enqueues Request after delay on every event: the queue keeps the
// earliest of the times asked while Request waits, so the first event of a
// burst sets when its pass runs.
func wake[T any](delay time.Duration) handler.TypedFuncs[T, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	add := func(q queue) { q.AddAfter(Request, delay) }
	return handler.TypedFuncs[T, reconcile.Request]{
		CreateFunc:  func(_ context.Context, _ event.TypedCreateEvent[T], q queue) { add(q) },
		UpdateFunc:  func(_ context.Context, _ event.TypedUpdateEvent[T], q queue) { add(q) },
		DeleteFunc:  func(_ context.Context, _ event.TypedDeleteEvent[T], q queue) { add(q) },
		GenericFunc: func(_ context.Context, _ event.TypedGenericEvent[T], q queue) { add(q) },
	}
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
