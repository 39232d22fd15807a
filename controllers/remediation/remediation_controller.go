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
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/internal/watches"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// Finalizer keeps an S3GWRemediation until the taints it added and the
// delegate fencing CR it created are gone.
const Finalizer = "s3gw-remediation.medik8s.io/cleanup"

// Intervals are the backstop re-checks, by what a pass waits for. Passes
// are woken by watch events on what they read (remediation_watches.go) and
// at the moments a decision names (Decision.WakeAt); these only cover what
// no event announces, such as a template selecting pods outside the cache.
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

// Reconciler moves s3gw off the node an S3GWRemediation names.
type Reconciler struct {
	// Client writes, and reads from the manager's cache: our CRs, nodes,
	// node Leases, VolumeAttachments, the s3gw pods WorkloadCache selects,
	// Longhorn's CRs and other remediators' CRs.
	Client client.Client
	// APIReader reads uncached: the node right before a destructive write
	// (safety never rests on a stale cache), pods outside the cache, and
	// the claims, volumes and ReplicaSets of a target, read once.
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

	// own is what this process wrote that its cache may not show yet
	// (ownWrites): a pass decides on neither an older copy of the CR nor
	// a pod it force-deleted.
	own ownWrites

	// watches adds watches on kinds found at run time (other remediators',
	// Longhorn's); nil without a manager, as in step-by-step tests.
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
// Nodes: readiness and taints are fencing evidence; patch adds and removes the
// out-of-service taint; status patch drops a dead kubelet's volumesInUse entry.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
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
// Attachments: verify release, and delete one under the DeleteVolumeAttachment strategy.
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=list;watch;delete
// Longhorn: node state, instance managers, replicas and tickets are read (from
// watched caches); the one write removes the failed node's csi-attacher ticket
// (config/policy admits nothing else).
// +kubebuilder:rbac:groups=longhorn.io,resources=nodes;replicas;volumeattachments;volumes;instancemanagers,verbs=get;list;watch
// +kubebuilder:rbac:groups=longhorn.io,resources=volumeattachments,verbs=patch
// Fencing evidence from medik8s remediators, read from watched caches; their
// CRs may also be created as delegate, patched with NHC's timed-out
// annotation, and deleted with ours. Other kinds listed in spec.fencing need
// a ClusterRole of their own with get, list and watch (docs/configuration.md).
// +kubebuilder:rbac:groups=fence-agents-remediation.medik8s.io,resources=fenceagentsremediations,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=fence-agents-remediation.medik8s.io,resources=fenceagentsremediationtemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=self-node-remediation.medik8s.io,resources=selfnoderemediations,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=self-node-remediation.medik8s.io,resources=selfnoderemediationtemplates,verbs=get;list;watch
// Events on our CRs and on nodes for every destructive step.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile runs observe → decide → act passes, each deriving the status
// from what it saw; a pass's events and metrics follow the write of its
// status. A pass whose next step waits for nothing but its own writes
// (scope.chains) is followed at once by the next, instead of by the watch
// event of its own write, which at a thousand nodes took up to half a
// second. A pass that force-deleted pods leaves its status to the next
// pass's write (scope.writesWithNext): nothing waits for that record.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// From the cache unless it is behind this process's own last write
	// (ownWrites); a pass that still read a copy older than the API's loses
	// the optimistic lock on its status patch and runs again.
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
	var held heldStatus
	for n := 1; ; n++ {
		res, chained, err := r.pass(ctx, rem, nodeName, node, &held, n == maxPasses)
		if err != nil || chained == nil || n == maxPasses || !rem.DeletionTimestamp.IsZero() {
			return res, err
		}
		log.V(1).Info("Running the next pass now: it waits only for this one's writes",
			"phase", rem.Status.Phase, "forceDeleted", chained.forceDeleted)
		// The node as this pass's writes left it: the cache may not show
		// them yet. A newer node makes confirmNode drop a destructive
		// decision, as in any pass.
		node = chained.node
	}
}

// maxPasses bounds the passes one Reconcile runs back to back: recording
// the targets, then opening the gate; or force-deleting the pods, then
// releasing their volumes.
const maxPasses = 3

// pass runs one observe → decide → act pass on rem and derives the status
// from it. It writes the status once, with that of the passes held before
// it, and then tells their transitions and its own; or, when its next pass
// writes for it (scope.writesWithNext, unless it is the last), it adds
// itself to held. It returns the pass's scope as chained when the next
// pass is due now.
func (r *Reconciler) pass(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, nodeName string,
	node *corev1.Node, held *heldStatus, last bool) (res reconcile.Result, chained *scope, retErr error) {
	held.start(rem)
	before := rem.Status.DeepCopy()
	// derived is the pass once it derived the status; its transitions are
	// told after the status write.
	var derived *scope
	defer func() {
		if retErr == nil && derived != nil && !last && derived.writesWithNext() {
			held.add(derived, before, &rem.Status)
			chained = derived
			return
		}
		written, unwritten := held.take()
		gone, err := r.patchStatus(ctx, written, rem, retErr)
		switch {
		case apierrors.IsConflict(err):
			// Decided on a stale copy of the CR: decide again on the new one,
			// having told nothing of this pass or those held.
			res, retErr = reconcile.Result{RequeueAfter: staleRetry}, nil
		case err != nil:
			retErr = kerrors.NewAggregate([]error{retErr, err})
		default:
			// The held passes' writes are done and their status is written,
			// whatever became of this pass.
			for _, p := range unwritten {
				r.recordTransition(ctx, p.scope, &p.before, &p.after)
			}
			if retErr == nil && derived != nil {
				r.recordTransition(ctx, derived, before, &rem.Status)
				if !gone && derived.chains() {
					chained = derived
				}
			}
		}
		if retErr != nil {
			res = reconcile.Result{} // the error requeues with backoff
		}
	}()

	s, err := r.observe(ctx, rem, nodeName, node)
	if err != nil {
		return reconcile.Result{}, nil, err
	}
	s.decision = failover.Decide(s.obs)
	if err := r.act(ctx, s); err != nil {
		if errors.Is(err, errCacheBehind) {
			return reconcile.Result{RequeueAfter: staleRetry}, nil, nil
		}
		return reconcile.Result{}, nil, err
	}
	rem.Status, derived = nextStatus(s), s
	return reconcile.Result{RequeueAfter: r.requeueAfter(s)}, nil, nil
}

// staleRetry is how soon a pass that read a stale cache runs again.
const staleRetry = 100 * time.Millisecond

// requeueAfter is the backstop of what the pass waits for, or sooner the
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
	r.own.saw(rem)
	events.RemediationStarted(r.Recorder, rem)
	return nil
}
