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
	"errors"
	"fmt"
	"time"

	"github.com/medik8s/common/pkg/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/internal/ownwrites"
	"github.com/s3gw-tech/s3gw-remediation/controllers/internal/watches"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/step"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// Finalizer keeps an S3GWRemediation until the taints it added and the
// delegate fencing CR it created are gone.
const Finalizer = "s3gw-remediation.medik8s.io/cleanup"

// Intervals are the backstop re-checks, by what a step waits for: watch
// events and Decision.WakeAt wake steps; these cover what nothing announces,
// such as a template selecting pods outside the cache.
type Intervals struct {
	NodeFailure  time.Duration
	Fencing      time.Duration
	Release      time.Duration
	Replacement  time.Duration
	AfterFailure time.Duration
	Storage      time.Duration
	Status       time.Duration
}

// DefaultIntervals are the production backstops.
func DefaultIntervals() Intervals {
	return Intervals{
		NodeFailure:  time.Minute,
		Fencing:      30 * time.Second,
		Release:      10 * time.Second,
		Replacement:  10 * time.Second,
		AfterFailure: 30 * time.Second,
		Storage:      10 * time.Second,
		Status:       10 * time.Second,
	}
}

// For maps what a step waits for to its requeue interval.
func (i Intervals) For(w step.Wait) time.Duration {
	switch w {
	case step.WaitForRecord:
		return i.Status
	case step.WaitForNodeFailure:
		return i.NodeFailure
	case step.WaitForFencing:
		return i.Fencing
	case step.WaitForRelease:
		return i.Release
	case step.WaitForReplacement:
		return i.Replacement
	case step.WaitAfterFailure:
		return i.AfterFailure
	case step.WaitForStorage:
		return i.Storage
	default:
		return 0
	}
}

// Reconciler moves s3gw off the node an S3GWRemediation names.
type Reconciler struct {
	// Client writes, and reads from the manager's cache.
	Client client.Client
	// APIReader reads uncached: the node right before a destructive write
	// (safety never rests on a stale cache), pods outside the cache, and a
	// target's claims, volumes and ReplicaSets, read once.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	Metrics   *metrics.Recorder
	Intervals Intervals
	// WorkloadCache is the label selector the manager caches pods by
	// (CacheOptions); nil when every pod Client reads is in it.
	WorkloadCache labels.Selector
	// Leases times kubelet Lease renewals on Clock (WatchLeases); nil
	// leaves replica nodes' Lease ages to their own clocks.
	Leases *storage.LeaseSightings
	// InstanceManagers indexes the cache's Longhorn instance managers by
	// node, one index for both reconcilers; nil scans them all for each
	// replica node.
	InstanceManagers *storage.InstanceManagerIndex
	// PodStore is the store of the cache's pod informer, which
	// workloads.Replacement scans in place; nil lists the pods.
	PodStore toolscache.Indexer

	// own is what this process wrote that its cache may not show yet.
	own ownwrites.Writes
	// watches adds watches on kinds found at run time; nil without a
	// manager, as in step-by-step tests.
	watches *watches.Dynamic
}

// NewReconciler returns a reconciler with default intervals.
func NewReconciler(c client.Client, reader client.Reader, recorder record.EventRecorder,
	clk clock.PassiveClock, m *metrics.Recorder) *Reconciler {
	return &Reconciler{Client: c, APIReader: reader, Recorder: recorder, Clock: clk, Metrics: m,
		Intervals: DefaultIntervals()}
}

var _ reconcile.Reconciler = &Reconciler{}

// NHC creates, annotates and deletes our CRs; we write their status and finalizer.
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediations/finalizers,verbs=update
// Nodes: readiness and taints are fencing evidence.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// Node Leases: a kubelet that still renews its Lease is alive, whatever the
// evidence says; replicas count as reachable only on nodes with a fresh one.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// Pods: find s3gw pods and their replacements (watched: the cache holds only
// s3gw pods); force-delete only the targets.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// Volumes: classify a target's claims; only bound RWO Longhorn volumes are released.
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=get;list;watch
// Owners: resolve a pod's ReplicaSet to its Deployment to recognise the replacement.
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get
// Attachments: release progress is read from the watched cache.
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=list;watch
// Longhorn: node state, instance managers, replicas and tickets are read
// from watched caches.
// +kubebuilder:rbac:groups=longhorn.io,resources=nodes;replicas;volumeattachments;volumes;instancemanagers,verbs=get;list;watch
// The rights the evidence sources' and release strategies' adapters write
// with are marked beside their writes (internal/fencing,
// internal/attachments).
// Events on our CRs and on nodes for every destructive step.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile runs the remediation's state machine (internal/failover/step),
// one step at a time:
//
//	observe → step.Step → act → write the status → tell
//
// The status write is the only one, and logs, events and metrics follow it.
// A step whose next one waits only for its own writes runs it at once
// (step.NextNow) instead of after their watch event, half a second at a
// thousand nodes; one that force-deleted pods leaves its status to the next
// step's write (step.NextNowWritingForThis).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	rem, err := r.getRemediation(ctx, req.NamespacedName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.ForgetPhase(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	nodeName := medik8s.NodeName(rem)
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
	w := unwritten{api: rem.DeepCopy()}
	for n := 1; ; n++ {
		s, err := r.runStep(ctx, rem, nodeName, node)
		if err == nil && s.decision.Next == step.NextNowWritingForThis && n < maxSteps {
			w.add(s)
			node = s.node
			continue
		}
		res, next, err := r.write(ctx, &w, rem, s, err)
		if !next || n == maxSteps {
			return res, err
		}
		log.V(1).Info("Running the next step now: it waits only for this one's writes", "phase", rem.Status.Phase)
		// The node as this step's writes left it, which the cache may not
		// show yet; confirmNode still guards every destructive write.
		node = s.node
	}
}

// maxSteps bounds the steps one Reconcile runs back to back: recording the
// targets, then opening the gate; or force-deleting the pods, then
// releasing their volumes.
const maxSteps = 3

// runStep runs one step of the state machine on rem: observe, step, act. It
// derives the status the step writes into rem; the caller writes it.
func (r *Reconciler) runStep(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, nodeName string,
	node *corev1.Node) (*scope, error) {
	s, err := r.observe(ctx, rem, nodeName, node)
	if err != nil {
		return nil, err
	}
	s.decision, s.memory = step.Step(s.obs, rem.Status.Memory)
	if err := r.act(ctx, s); err != nil {
		return nil, err
	}
	s.before = rem.Status
	rem.Status = statusOf(s)
	s.after = rem.Status
	return s, nil
}

// unwritten is the CR as the API has it, and the steps the next status
// write is for.
type unwritten struct {
	api   *s3gwv1alpha1.S3GWRemediation
	steps []*scope
}

// add leaves a step's status to the next step's write.
func (w *unwritten) add(s *scope) { w.steps = append(w.steps, s) }

// write writes the status of the steps since the last write, s last, tells
// their transitions, and says whether the next step runs now. A failed step
// (s nil) records its error; a write that loses the optimistic lock tells
// nothing, and the step runs again soon on the new copy of the CR.
func (r *Reconciler) write(ctx context.Context, w *unwritten, rem *s3gwv1alpha1.S3GWRemediation, s *scope,
	stepErr error) (res reconcile.Result, next bool, err error) {
	recorded := stepErr
	if errors.Is(stepErr, errCacheBehind) {
		recorded = nil
	}
	gone, err := r.patchStatus(ctx, w.api, rem, recorded)
	switch {
	case apierrors.IsConflict(err):
		return reconcile.Result{RequeueAfter: staleRetry}, false, nil
	case err != nil:
		return reconcile.Result{}, false, kerrors.NewAggregate([]error{recorded, err})
	}
	// Every step deferred to this write acted and derived its status.
	for _, deferred := range w.steps {
		r.tell(ctx, deferred)
	}
	w.steps, w.api = nil, rem.DeepCopy()
	switch {
	case errors.Is(stepErr, errCacheBehind):
		return reconcile.Result{RequeueAfter: staleRetry}, false, nil
	case stepErr != nil:
		return reconcile.Result{}, false, stepErr
	}
	r.tell(ctx, s)
	next = !gone && s.decision.Next != step.NextOnEvent && rem.DeletionTimestamp.IsZero()
	return reconcile.Result{RequeueAfter: r.requeueAfter(s)}, next, nil
}

// staleRetry is how soon a step that read a stale cache runs again.
const staleRetry = 100 * time.Millisecond

// requeueAfter is the backstop of what the step waits for, or sooner the
// moment the decision changes by itself (a Lease expiring, a deadline).
func (r *Reconciler) requeueAfter(s *scope) time.Duration {
	after := r.Intervals.For(s.decision.Wait)
	if wake := s.decision.WakeAt; !wake.IsZero() {
		if until := wake.Sub(s.now.Time) + time.Second; until > 0 && (after == 0 || until < after) {
			after = until
		}
	}
	return after
}

// getNode reads the node from the cache; nil when it does not exist.
func (r *Reconciler) getNode(ctx context.Context, name string) (*corev1.Node, error) {
	node := &corev1.Node{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting node %s: %w", name, err)
	}
	return node, nil
}

// ensureFinalizer adds the finalizer when the remediation starts: the node
// exists and NHC has not timed it out. Without it nothing needs cleaning up.
func (r *Reconciler) ensureFinalizer(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node *corev1.Node) error {
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
	r.own.Saw(rem)
	events.RemediationStarted(r.Recorder, rem)
	return nil
}

// getRemediation reads the CR from the cache, or from the API when the
// cached copy is not the version this process last wrote or read there.
// A CR the API no longer has keeps its entry until the cache sees it go.
func (r *Reconciler) getRemediation(ctx context.Context, key types.NamespacedName) (*s3gwv1alpha1.S3GWRemediation, error) {
	rem := &s3gwv1alpha1.S3GWRemediation{}
	if err := r.Client.Get(ctx, key, rem); err != nil {
		if apierrors.IsNotFound(err) {
			r.own.Forget(key)
		}
		return nil, err
	}
	if !r.own.Current(rem) {
		if err := r.APIReader.Get(ctx, key, rem); err != nil {
			return nil, err
		}
	}
	r.own.Saw(rem)
	return rem, nil
}
