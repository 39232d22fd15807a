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
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/internal/watches"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/protection"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// Event reasons of the protection report, emitted on the template only when
// a pod's protection changes.
const (
	EventPodUnprotected = "S3GWUnprotected"
	EventPodProtected   = "S3GWProtected"
)

// Reconciler keeps each S3GWRemediationTemplate's status a
// protection report: for every pod the template selects, would the
// remediation move it if its node failed now (the failover decision run on
// that imagined failure), would a NodeHealthCheck start the remediation,
// and how fast. It is woken by watch events only, never polls, and writes
// the status only when the report changed.
type Reconciler struct {
	// Client reads through the manager's cache and writes the status.
	Client client.Client
	// APIReader reads uncached: PVCs, PVs, and the pods of templates the
	// pod cache does not cover.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	Metrics   *metrics.Recorder
	// WorkloadCache is the label selector the manager caches pods by.
	WorkloadCache labels.Selector
	// Leases times kubelet Lease renewals on Clock (WatchLeases); nil
	// leaves replica nodes' Lease ages to their own clocks.
	Leases *storage.LeaseSightings
	// InstanceManagers indexes the cache's Longhorn instance managers by
	// node, one index for both reconcilers; nil scans them all for each
	// replica node.
	InstanceManagers *storage.InstanceManagerIndex
	// NodeMonitorGracePeriod is kube-controller-manager's
	// --node-monitor-grace-period; zero means its default.
	NodeMonitorGracePeriod time.Duration
	// Nodes are the cached nodes, read in place (the node informer's store), for the
	// candidates of templates with spec.prePull.enabled; nil reports no
	// warmth.
	Nodes NodeStore
	// PrePull reads the pre-pull pods (controllers/prepull.NewCache), for
	// the warmth of templates with spec.prePull.enabled; nil reports none.
	PrePull cache.Cache
	// ImagePullEstimate is what a cold candidate node adds to a pod's
	// expected RTO; zero means protection.DefaultImagePullEstimate.
	ImagePullEstimate time.Duration
	// ReportInterval is the least time between two passes of one
	// template's report; what changes within it is read, reported in the
	// metrics and written when it ends. Zero reports every change at once.
	// A pass reads every selected pod's volumes, replicas and their nodes,
	// and every node, Longhorn or pod event wakes every template: during a
	// failover at a thousand nodes, passes per event were half the
	// manager's garbage. Every status write also wakes each
	// NodeHealthCheck that references the template (NHC watches its
	// templates' updates), and a NodeHealthCheck's pass lists the
	// remediations once per healthy node: those passes delay the CRs of
	// the next failed nodes.
	ReportInterval time.Duration

	watches *watches.Dynamic
	// reported is when each template's report last ran a pass.
	reported sync.Map // types.NamespacedName → time.Time
}

// The report reads templates and writes their status, and reads, never
// writes, NodeHealthChecks and what the remediation reads.
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediationtemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediationtemplates/status,verbs=patch
// +kubebuilder:rbac:groups=remediation.medik8s.io,resources=nodehealthchecks,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods;nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=list;watch
// +kubebuilder:rbac:groups=longhorn.io,resources=nodes;replicas;volumeattachments;volumes,verbs=get;list;watch
// +kubebuilder:rbac:groups=longhorn.io,resources=settings,resourceNames=auto-salvage,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile reports on one template.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	now := r.Clock.Now()
	if wait := r.untilNextPass(req.NamespacedName, now); wait > 0 {
		// The events since the last pass are read together when it ends.
		// Before the template is read: every node, pod or Longhorn event
		// comes here, and a read copies the whole report.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	t := &s3gwv1alpha1.S3GWRemediationTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.ForgetProtection(req.NamespacedName)
			r.Metrics.ForgetWarmth(req.NamespacedName)
			r.reported.Delete(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	in, pods, err := r.observe(ctx, t)
	if err != nil {
		return ctrl.Result{}, err
	}
	err = r.writeReport(ctx, t, protection.Report(in, pods))
	if apierrors.IsConflict(err) {
		// The template changed since it was read: the template controller's
		// annotation at start-up, a spec edit. Not an error: report again on
		// the new copy, which the write's lock keeps from being overwritten
		// by a stale report or announced twice.
		logf.FromContext(ctx).V(1).Info("Template changed while reporting; reporting again")
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	}
	if err == nil {
		r.reported.Store(req.NamespacedName, now)
	}
	return ctrl.Result{}, err
}

// DefaultReportInterval is the manager's ReportInterval: a failover's
// report is seconds behind at most, while a burst of failures wakes each
// NodeHealthCheck once per interval instead of once per pod change.
const DefaultReportInterval = 5 * time.Second

// staleRetry is how soon a report that lost the lock on its status write
// runs again.
const staleRetry = 100 * time.Millisecond

// writeReport records the report in the metrics and, when it changed, in
// the template's status, then emits an event for each pod whose protection
// changed. The status write is locked on the template it read: a pass that
// read a stale copy fails with a conflict instead of overwriting a newer
// report or announcing a change twice.
func (r *Reconciler) writeReport(ctx context.Context, t *s3gwv1alpha1.S3GWRemediationTemplate,
	report s3gwv1alpha1.S3GWRemediationTemplateStatus) error {
	key := types.NamespacedName{Namespace: t.Namespace, Name: t.Name}
	r.Metrics.SetProtection(key, podMetrics(report.Pods))
	r.recordWarmth(key, report.Pods)

	next := t.DeepCopy()
	conditions := slices.Clone(t.Status.Conditions)
	if meta.FindStatusCondition(report.Conditions, s3gwv1alpha1.ConditionImagesWarm) == nil {
		meta.RemoveStatusCondition(&conditions, s3gwv1alpha1.ConditionImagesWarm) // spec.prePull turned off
	}
	for _, c := range report.Conditions {
		c.ObservedGeneration = t.Generation
		meta.SetStatusCondition(&conditions, c)
	}
	report.Conditions, report.ObservedGeneration = conditions, t.Generation
	next.Status = report
	if equality.Semantic.DeepEqual(t.Status, next.Status) {
		return nil
	}
	patch := client.MergeFromWithOptions(t, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Status().Patch(ctx, next, patch); err != nil {
		return fmt.Errorf("writing the protection report of S3GWRemediationTemplate %s: %w", key, err)
	}
	logf.FromContext(ctx).V(1).Info("Protection report updated", "protection", report.Protection)
	r.emitTransitions(t, next)
	r.emitWarmthTransitions(t, next)
	return nil
}

// untilNextPass is how long the template's report must wait before its
// next pass; zero when it may run now.
func (r *Reconciler) untilNextPass(key types.NamespacedName, now time.Time) time.Duration {
	last, ok := r.reported.Load(key)
	if r.ReportInterval <= 0 || !ok {
		return 0
	}
	return max(0, last.(time.Time).Add(r.ReportInterval).Sub(now))
}

// emitTransitions warns about each pod that became unprotected (or
// appeared unprotected) and tells when one is protected again.
func (r *Reconciler) emitTransitions(old, updated *s3gwv1alpha1.S3GWRemediationTemplate) {
	before := map[string]s3gwv1alpha1.PodProtection{}
	for _, p := range old.Status.Pods {
		before[p.Namespace+"/"+p.Name] = p
	}
	for _, p := range updated.Status.Pods {
		prev, seen := before[p.Namespace+"/"+p.Name]
		switch {
		case !p.Protected && (!seen || prev.Protected):
			r.Recorder.Eventf(updated, corev1.EventTypeWarning, EventPodUnprotected,
				"s3gw pod %s/%s would not move if node %s failed now (%s): %s", p.Namespace, p.Name, p.Node, p.Reason, p.Message)
		case p.Protected && seen && !prev.Protected:
			r.Recorder.Eventf(updated, corev1.EventTypeNormal, EventPodProtected,
				"s3gw pod %s/%s is protected again: %s", p.Namespace, p.Name, p.Message)
		}
	}
}

func podMetrics(pods []s3gwv1alpha1.PodProtection) []metrics.PodProtection {
	out := make([]metrics.PodProtection, 0, len(pods))
	for _, p := range pods {
		m := metrics.PodProtection{Namespace: p.Namespace, Pod: p.Name, Node: p.Node, Reason: p.Reason, Protected: p.Protected}
		if p.Protected && p.ExpectedRTO != nil {
			m.ExpectedRTO = p.ExpectedRTO.Duration
		}
		out = append(out, m)
	}
	return out
}

func (r *Reconciler) nodeMonitorGracePeriod() time.Duration {
	if r.NodeMonitorGracePeriod > 0 {
		return r.NodeMonitorGracePeriod
	}
	return protection.DefaultNodeMonitorGracePeriod
}
