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

package remediation

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/internal/watches"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
)

// podNodeField indexes the cached pods by node, so a step lists the s3gw
// pods of one node without a request.
const podNodeField = "spec.nodeName"

// SetupWithManager wakes a remediation on what its decision reads: the CR,
// its node (readiness, taints, volumesInUse), VolumeAttachments on it, the
// cached s3gw pods on it or of its targets' namespaces, and, once a step
// finds them, Longhorn's Nodes, Replicas and VolumeAttachments and the
// other remediators' CRs it counts as evidence. Node Leases are read but
// not watched (they change every 10 s); the moment one expires is a
// decision's WakeAt instead.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podNodeField,
		func(obj client.Object) []string { return []string{obj.(*corev1.Pod).Spec.NodeName} }); err != nil {
		return fmt.Errorf("indexing pods by node: %w", err)
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&s3gwv1alpha1.S3GWRemediation{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.remediationsForNode),
			builder.WithPredicates(nodeChanged)).
		Watches(&storagev1.VolumeAttachment{}, handler.EnqueueRequestsFromMapFunc(r.remediationsForAttachment)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.remediationsForPod)).
		// The node's other remediations: their specs decide whether this
		// one may act on a shared pod (step.Rules).
		Watches(&s3gwv1alpha1.S3GWRemediation{}, handler.EnqueueRequestsFromMapFunc(r.otherRemediationsOfNode),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Named("s3gwremediation").
		Build(r)
	if err != nil {
		return err
	}
	r.watches = watches.NewDynamic(mgr, c)
	return nil
}

// nodeChanged passes node updates that can change a decision (readiness,
// the exclude label, taints, volumesInUse), not the kubelet's periodic
// heartbeats.
var nodeChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, oldOK := e.ObjectOld.(*corev1.Node)
	updated, newOK := e.ObjectNew.(*corev1.Node)
	if !oldOK || !newOK {
		return true
	}
	return watches.ReadyCondition(old) != watches.ReadyCondition(updated) ||
		failover.ExcludedFromRemediation(old.Labels) != failover.ExcludedFromRemediation(updated.Labels) ||
		!equality.Semantic.DeepEqual(old.Spec.Taints, updated.Spec.Taints) ||
		!slices.Equal(old.Status.VolumesInUse, updated.Status.VolumesInUse)
}}

// otherRemediationsOfNode wakes the other remediations of the node a
// remediation was created for, deleted from, or whose spec changed.
func (r *Reconciler) otherRemediationsOfNode(ctx context.Context, obj client.Object) []reconcile.Request {
	node := medik8s.NodeName(obj)
	return r.remediationsMatching(ctx, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
		return rem.UID != obj.GetUID() && medik8s.NodeName(rem) == node
	})
}

func (r *Reconciler) remediationsForNode(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.remediationsMatching(ctx, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
		return medik8s.NodeName(rem) == obj.GetName()
	})
}

func (r *Reconciler) remediationsForAttachment(ctx context.Context, obj client.Object) []reconcile.Request {
	va, ok := obj.(*storagev1.VolumeAttachment)
	if !ok {
		return nil
	}
	return r.remediationsMatching(ctx, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
		return medik8s.NodeName(rem) == va.Spec.NodeName
	})
}

// remediationsForPod wakes the remediations of the pod's node (a target)
// and those with a target in its namespace (a replacement).
func (r *Reconciler) remediationsForPod(ctx context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	return r.remediationsMatching(ctx, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
		return medik8s.NodeName(rem) == pod.Spec.NodeName || slices.ContainsFunc(rem.Status.Targets,
			func(t s3gwv1alpha1.TargetPod) bool { return t.Namespace == pod.Namespace })
	})
}

// remediationsForEvidence wakes the remediations of the node another
// remediator's CR is for.
func (r *Reconciler) remediationsForEvidence(ctx context.Context, obj client.Object) []reconcile.Request {
	node := medik8s.NodeName(obj)
	return r.remediationsMatching(ctx, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
		return medik8s.NodeName(rem) == node
	})
}

// remediationsForLonghorn wakes every remediation still at work: a Longhorn
// Node, Replica or VolumeAttachment can change the replica reachability or
// the release of any of them, and there are few.
func (r *Reconciler) remediationsForLonghorn(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.remediationsMatching(ctx, func(rem *s3gwv1alpha1.S3GWRemediation) bool {
		return !final(rem.Status.Phase) || rem.Status.Phase == s3gwv1alpha1.PhaseFailed
	})
}

// remediationsMatching lists (from the cache; there are few) the
// remediations match selects.
func (r *Reconciler) remediationsMatching(ctx context.Context, match func(*s3gwv1alpha1.S3GWRemediation) bool) []reconcile.Request {
	list := &s3gwv1alpha1.S3GWRemediationList{}
	// Read only: every pod and Longhorn event maps through here, and deep
	// copies of every CR's status added up at a thousand nodes.
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		logf.FromContext(ctx).Error(err, "Listing S3GWRemediations to map a watch event")
		return nil
	}
	return watches.RequestsFor(list.Items, match)
}

// watchLonghorn watches Longhorn's Nodes (readiness is status), its
// InstanceManagers (the replica processes they list are status), and the
// specs of its Replicas (node, failedAt, healthyAt) and VolumeAttachments
// (tickets).
func (r *Reconciler) watchLonghorn(ctx context.Context) {
	r.watches.Ensure(ctx, &longhorn.Node{}, r.remediationsForLonghorn)
	r.watches.Ensure(ctx, &longhorn.InstanceManager{}, r.remediationsForLonghorn)
	r.watches.Ensure(ctx, &longhorn.Replica{}, r.remediationsForLonghorn, predicate.GenerationChangedPredicate{})
	r.watches.Ensure(ctx, &longhorn.VolumeAttachment{}, r.remediationsForLonghorn, predicate.GenerationChangedPredicate{})
}

// watchEvidence watches a remediator kind the spec counts as evidence, or
// its delegate kind; their conditions are status, so every change counts.
func (r *Reconciler) watchEvidence(ctx context.Context, gvk schema.GroupVersionKind) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	r.watches.Ensure(ctx, obj, r.remediationsForEvidence)
}
