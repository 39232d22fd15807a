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

package protection

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/internal/watches"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/protection"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// SetupWithManager wakes a template's report on what it reads: the
// template's spec, the cached s3gw pods it selects (where they run, their
// labels and claims), nodes (readiness and labels), Longhorn
// VolumeAttachments of templates whose pods are not cached (a pod that
// moves attaches its volume elsewhere), and, once a pass finds them
// served, Longhorn's Nodes (readiness), InstanceManagers (state),
// Replicas (placement, health) and auto-salvage Setting (value),
// NodeHealthChecks and the delegate's template kind. Nothing polls: node
// Leases are read, not watched, and a node that stops renewing is
// reported NotReady by Kubernetes, which is a node event.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&s3gwv1alpha1.S3GWRemediationTemplate{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.templatesForPod), builder.WithPredicates(podPlacementChanged)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allTemplates), builder.WithPredicates(nodeReadinessOrLabelsChanged)).
		Watches(&storagev1.VolumeAttachment{}, handler.EnqueueRequestsFromMapFunc(r.templatesNotCached),
			builder.WithPredicates(longhornAttachmentComesOrGoes)).
		Named("s3gwremediationtemplate-protection").
		Build(r)
	if err != nil {
		return err
	}
	r.watches = watches.NewDynamic(mgr, c)
	return r.watchPrePull(c)
}

// podPlacementChanged passes pod updates that can change a report: where
// it runs, its labels, its claims, its end; not readiness flaps.
var podPlacementChanged = watches.Updated(func(old, updated *corev1.Pod) bool {
	return old.Spec.NodeName != updated.Spec.NodeName || !maps.Equal(old.Labels, updated.Labels) ||
		(old.DeletionTimestamp == nil) != (updated.DeletionTimestamp == nil) || old.Status.Phase != updated.Status.Phase ||
		!equality.Semantic.DeepEqual(old.Spec.Volumes, updated.Spec.Volumes)
})

// nodeReadinessOrLabelsChanged passes node updates that can change a
// report: readiness (replica nodes longhorn-manager reaches) and labels
// (NodeHealthCheck selectors), not the kubelet's heartbeats.
var nodeReadinessOrLabelsChanged = watches.Updated(func(old, updated *corev1.Node) bool {
	return watches.ReadyCondition(old) != watches.ReadyCondition(updated) || !maps.Equal(old.Labels, updated.Labels)
})

// longhornAttachmentComesOrGoes passes the creation and deletion of
// Longhorn's storage.k8s.io VolumeAttachments.
var longhornAttachmentComesOrGoes = predicate.And(
	predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }},
	predicate.NewPredicateFuncs(func(obj client.Object) bool {
		va, ok := obj.(*storagev1.VolumeAttachment)
		return ok && va.Spec.Attacher == longhorn.CSIDriverName
	}))

// longhornNodeReadinessChanged passes Longhorn Node updates that change
// its Ready condition, not its periodic disk and probe updates.
var longhornNodeReadinessChanged = watches.Updated(func(old, updated *longhorn.Node) bool {
	return longhornReady(old) != longhornReady(updated)
})

// instanceManagerStateChanged passes InstanceManager updates that change
// its state: the report imagines the release's first step done, so a
// running one confirms its replicas' stops and any other state holds them
// (failover.stoppedOn); the processes it lists change with every attach.
var instanceManagerStateChanged = watches.Updated(func(old, updated *longhorn.InstanceManager) bool {
	return old.Status.CurrentState != updated.Status.CurrentState || old.Spec.NodeID != updated.Spec.NodeID
})

func longhornReady(n *longhorn.Node) [2]string {
	for _, c := range n.Status.Conditions {
		if c.Type == longhorn.NodeConditionReady {
			return [2]string{c.Status, c.Reason}
		}
	}
	return [2]string{}
}

// settingValueChanged passes Setting updates that change its value.
var settingValueChanged = watches.Updated(func(old, updated *longhorn.Setting) bool {
	return old.Value != updated.Value
})

// watchLonghorn watches Longhorn's Nodes, the states of its
// InstanceManagers, the specs of its Replicas (node, failedAt, healthyAt)
// and the value of its auto-salvage Setting (the only one the cache holds),
// once Longhorn is found served.
func (r *Reconciler) watchLonghorn(ctx context.Context) {
	r.watches.Ensure(ctx, &longhorn.Node{}, r.allTemplates, longhornNodeReadinessChanged)
	r.watches.Ensure(ctx, &longhorn.InstanceManager{}, r.allTemplates, instanceManagerStateChanged)
	r.watches.Ensure(ctx, &longhorn.Replica{}, r.allTemplates, predicate.GenerationChangedPredicate{})
	r.watches.Ensure(ctx, &longhorn.Setting{}, r.allTemplates, settingValueChanged)
}

// watchHealthChecks watches NodeHealthCheck specs and phases once it is
// served.
func (r *Reconciler) watchHealthChecks(ctx context.Context) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(protection.NodeHealthCheckGVK)
	r.watches.Ensure(ctx, obj, r.allTemplates, healthCheckSpecOrPhaseChanged)
}

// healthCheckSpecOrPhaseChanged passes NodeHealthCheck updates that change
// its spec or its phase (NHC's status write: Disabled when a template is
// missing, Enabled again once it is back); its other status writes come
// with every pass over its nodes.
var healthCheckSpecOrPhaseChanged = predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
	watches.Updated(func(old, updated *unstructured.Unstructured) bool {
		oldPhase, _, _ := unstructured.NestedString(old.Object, "status", "phase")
		newPhase, _, _ := unstructured.NestedString(updated.Object, "status", "phase")
		return oldPhase != newPhase
	}))

// watchPreviewed watches a kind whose changes change what an evidence
// adapter previews (fencing.PreviewWatched): the delegate's template kind,
// whose templates coming, changing and going change whether the delegate
// could be created.
func (r *Reconciler) watchPreviewed(ctx context.Context, gvk schema.GroupVersionKind) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	r.watches.Ensure(ctx, obj, r.allTemplates)
}

// allTemplates maps an event to every template: there are few, and a node,
// Longhorn or NodeHealthCheck change can concern any of them.
func (r *Reconciler) allTemplates(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.templatesMatching(ctx, func(*s3gwv1alpha1.S3GWRemediationTemplate) bool { return true })
}

// templatesForPod maps a pod to the templates that select it, and to
// those that reported it (its labels may no longer match).
func (r *Reconciler) templatesForPod(ctx context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	return r.templatesMatching(ctx, func(t *s3gwv1alpha1.S3GWRemediationTemplate) bool {
		spec := t.Spec.Template.Spec
		if slices.ContainsFunc(t.Status.Pods, func(p s3gwv1alpha1.PodProtection) bool {
			return p.Namespace == pod.Namespace && p.Name == pod.Name
		}) {
			return true
		}
		if len(spec.Namespaces) > 0 && !slices.Contains(spec.Namespaces, pod.Namespace) {
			return false
		}
		selector, err := metav1.LabelSelectorAsSelector(spec.WorkloadSelectorOrDefault())
		return err == nil && selector.Matches(labels.Set(pod.Labels))
	})
}

// templatesNotCached maps an event to the templates whose pods the cache
// does not hold, so no pod event reaches them.
func (r *Reconciler) templatesNotCached(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.templatesMatching(ctx, func(t *s3gwv1alpha1.S3GWRemediationTemplate) bool {
		return !workloads.Covered(t.Spec.Template.Spec, r.WorkloadCache)
	})
}

func (r *Reconciler) templatesMatching(ctx context.Context, match func(*s3gwv1alpha1.S3GWRemediationTemplate) bool) []reconcile.Request {
	list := &s3gwv1alpha1.S3GWRemediationTemplateList{}
	// Read only: every node readiness change maps through here, and deep
	// copies of every template's report were a tenth of all the manager
	// allocated at a thousand nodes.
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		logf.FromContext(ctx).Error(err, "Listing S3GWRemediationTemplates to map a watch event")
		return nil
	}
	return watches.RequestsFor(list.Items, match)
}
