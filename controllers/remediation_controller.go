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

package controllers

import (
	"context"
	"fmt"
	"time"

	"github.com/medik8s/common/pkg/events"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
)

// Finalizer keeps an S3GWRemediation until the taints it added and the
// delegate fencing CR it created are gone.
const Finalizer = "s3gw-remediation.medik8s.io/cleanup"

// Intervals are how often a pass re-checks, by what it waits for. Waits are
// polled because Longhorn's and other remediators' CRs are read uncached and
// not watched.
type Intervals struct {
	NodeFailure  time.Duration
	Fencing      time.Duration
	Release      time.Duration
	Replacement  time.Duration
	AfterFailure time.Duration
	Storage      time.Duration
	Status       time.Duration
}

// DefaultIntervals are the production polling intervals.
func DefaultIntervals() Intervals {
	return Intervals{
		NodeFailure:  10 * time.Second,
		Fencing:      2 * time.Second,
		Release:      500 * time.Millisecond,
		Replacement:  500 * time.Millisecond,
		AfterFailure: 15 * time.Second,
		Storage:      10 * time.Second,
		Status:       time.Second,
	}
}

// For maps what a pass waits for to its requeue interval.
func (i Intervals) For(w failover.Wait) time.Duration {
	switch w {
	case failover.WaitForStatus:
		return i.Status
	case failover.WaitForNodeFailure:
		return i.NodeFailure
	case failover.WaitForFencing:
		return i.Fencing
	case failover.WaitForRelease:
		return i.Release
	case failover.WaitForReplacement:
		return i.Replacement
	case failover.WaitAfterFailure:
		return i.AfterFailure
	case failover.WaitForStorage:
		return i.Storage
	default:
		return 0
	}
}

// RemediationReconciler moves s3gw off the node an S3GWRemediation names.
type RemediationReconciler struct {
	// Client writes, and reads what the manager caches (our CRs, nodes).
	Client client.Client
	// APIReader reads uncached, so every safety decision sees the API as it
	// is now: nodes, pods, volumes, attachments, Longhorn and evidence CRs.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	Metrics   *metrics.Recorder
	Intervals Intervals
}

// NewRemediationReconciler returns a reconciler with default intervals.
func NewRemediationReconciler(c client.Client, reader client.Reader, recorder record.EventRecorder,
	clk clock.PassiveClock, m *metrics.Recorder) *RemediationReconciler {
	return &RemediationReconciler{Client: c, APIReader: reader, Recorder: recorder, Clock: clk, Metrics: m,
		Intervals: DefaultIntervals()}
}

var _ reconcile.Reconciler = &RemediationReconciler{}

// NHC creates, annotates and deletes our CRs; we write their status and finalizer.
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediations/finalizers,verbs=update
// Nodes: readiness and taints are fencing evidence; patch adds and removes the
// out-of-service taint; status patch drops a dead kubelet's volumesInUse entry.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// Node Leases: a kubelet that still renews its Lease is alive, whatever the
// evidence says; replicas count as reachable only on nodes with a fresh one.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// Pods: find s3gw pods and their replacements; force-delete only the targets.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;delete
// Volumes: classify a target's claims; only bound RWO Longhorn volumes are released.
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=get
// Owners: resolve a pod's ReplicaSet to its Deployment to recognise the replacement.
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get
// Attachments: verify release, and delete one under the DeleteVolumeAttachment strategy.
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=list;watch;delete
// Longhorn: node state, replicas and tickets are read, never written.
// +kubebuilder:rbac:groups=longhorn.io,resources=nodes;replicas;volumeattachments;volumes,verbs=get;list
// Fencing evidence from medik8s remediators; their CRs may also be created as
// delegate, patched with NHC's timed-out annotation, and deleted with ours.
// Other kinds listed in spec.fencing need a ClusterRole of their own (docs/configuration.md).
// +kubebuilder:rbac:groups=fence-agents-remediation.medik8s.io,resources=fenceagentsremediations,verbs=get;list;create;patch;delete
// +kubebuilder:rbac:groups=fence-agents-remediation.medik8s.io,resources=fenceagentsremediationtemplates,verbs=get
// +kubebuilder:rbac:groups=self-node-remediation.medik8s.io,resources=selfnoderemediations,verbs=get;list;create;patch;delete
// +kubebuilder:rbac:groups=self-node-remediation.medik8s.io,resources=selfnoderemediationtemplates,verbs=get
// Events on our CRs and on nodes for every destructive step.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile runs one observe → decide → act pass and writes status once.
func (r *RemediationReconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, retErr error) {
	// Read uncached: a pass woken by a node or attachment event right after
	// our own status patch would otherwise see a stale CR and lose the
	// optimistic lock on its status write.
	rem := &s3gwv1alpha1.S3GWRemediation{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, rem); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	nodeName := fencing.NodeName(rem)
	log := logf.FromContext(ctx).WithValues("Node", klog.KRef("", nodeName))
	ctx = logf.IntoContext(ctx, log)

	node, err := r.getNode(ctx, nodeName)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !rem.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.reconcileDelete(ctx, rem, node)
	}
	if err := r.ensureFinalizer(ctx, rem, node); err != nil {
		return reconcile.Result{}, err
	}

	original := rem.DeepCopy()
	defer func() {
		if err := r.patchStatus(ctx, original, rem, retErr); err != nil {
			retErr = kerrors.NewAggregate([]error{retErr, err})
		}
		if retErr != nil {
			res = reconcile.Result{} // the error requeues with backoff
		}
	}()

	s, err := r.observe(ctx, rem, nodeName, node)
	if err != nil {
		return reconcile.Result{}, err
	}
	s.decision = failover.Decide(s.obs)
	if err := r.act(ctx, s); err != nil {
		return reconcile.Result{}, err
	}
	r.updateStatus(ctx, s)
	return reconcile.Result{RequeueAfter: r.Intervals.For(s.decision.Wait)}, nil
}

// getNode reads the node uncached; nil when it does not exist.
func (r *RemediationReconciler) getNode(ctx context.Context, name string) (*corev1.Node, error) {
	node := &corev1.Node{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting node %s: %w", name, err)
	}
	return node, nil
}

// ensureFinalizer adds the finalizer when the remediation starts: the node
// exists and NHC has not timed it out. Without it nothing needs cleaning up.
func (r *RemediationReconciler) ensureFinalizer(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node *corev1.Node) error {
	if node == nil || timedOut(rem) || controllerutil.ContainsFinalizer(rem, Finalizer) {
		return nil
	}
	logf.FromContext(ctx).Info("Starting remediation")
	// Locked so a concurrent change to the finalizer list is never overwritten.
	patch := client.MergeFromWithOptions(rem.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(rem, Finalizer)
	if err := r.Client.Patch(ctx, rem, patch); err != nil {
		return fmt.Errorf("adding finalizer: %w", err)
	}
	events.RemediationStarted(r.Recorder, rem)
	return nil
}

// SetupWithManager watches our CRs, the nodes they name (readiness and
// taints change the decision) and Longhorn's storage.k8s.io attachments
// (release progress).
func (r *RemediationReconciler) SetupWithManager(mgr manager.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&s3gwv1alpha1.S3GWRemediation{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.remediationsForNode)).
		Watches(&storagev1.VolumeAttachment{}, handler.EnqueueRequestsFromMapFunc(r.remediationsForAttachment)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Named("s3gwremediation").
		Complete(r)
}

func (r *RemediationReconciler) remediationsForNode(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.remediationsFor(ctx, obj.GetName())
}

func (r *RemediationReconciler) remediationsForAttachment(ctx context.Context, obj client.Object) []reconcile.Request {
	va, ok := obj.(*storagev1.VolumeAttachment)
	if !ok {
		return nil
	}
	return r.remediationsFor(ctx, va.Spec.NodeName)
}

// remediationsFor lists (from the cache; there are few) the remediations of a node.
func (r *RemediationReconciler) remediationsFor(ctx context.Context, node string) []reconcile.Request {
	list := &s3gwv1alpha1.S3GWRemediationList{}
	if err := r.Client.List(ctx, list); err != nil {
		logf.FromContext(ctx).Error(err, "Listing S3GWRemediations to map a watch event")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if fencing.NodeName(&list.Items[i]) == node {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}
