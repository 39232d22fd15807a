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
	"strings"

	"github.com/medik8s/common/pkg/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/release"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// errCacheBehind: the cache lagged behind the node the decision was about;
// the pass is dropped and runs again on fresh data.
var errCacheBehind = errors.New("the cached node is older than the API's")

// act performs the decision's writes in order — our taint's removal once
// its work is done, delegate, evict, release — and stops at the first
// error. Every write is idempotent: a repeated pass
// after a crash finds the work done and does nothing.
func (r *Reconciler) act(ctx context.Context, s *scope) error {
	d := s.decision
	if d.Destructive() || d.RemoveOwnTaint {
		if err := r.confirmNode(ctx, s); err != nil {
			return err
		}
	}
	if d.RemoveOwnTaint {
		if err := r.removeOwnTaint(ctx, s.rem, s.node); err != nil {
			return err
		}
	}
	if d.Gate.Disabled && d.Destructive() {
		logf.FromContext(ctx).Info("Fencing is disabled: acting without fencing evidence (unsafe)")
		events.WarningEvent(r.Recorder, s.rem, EventFencingDisabled,
			"fencing.mode is Disabled: evicting and releasing without fencing evidence")
	}
	if d.DropTaintOwner {
		logf.FromContext(ctx).Info("Removing the taint owner annotation: it names no taint on the node")
		if err := release.DropStaleTaintOwner(ctx, r.Client, s.node, release.OutOfServiceTaint()); err != nil {
			return err
		}
	}
	if err := r.actOnDelegate(ctx, s); err != nil {
		return err
	}
	for _, t := range d.Evict {
		if err := r.evict(ctx, s, t); err != nil {
			return err
		}
	}
	if d.Release.Writes() {
		return r.release(ctx, s)
	}
	return nil
}

// release performs the release's first step in Longhorn, then the release
// strategy's writes (release.Releasers), and counts and announces each one.
func (r *Reconciler) release(ctx context.Context, s *scope) error {
	plan := s.decision.Release
	w := release.Write{Client: r.Client, Node: s.node, Owner: s.rem.UID, Now: s.now,
		LonghornNamespace: s.rem.Spec.Release.LonghornNamespaceOrDefault()}
	if err := release.DetachInLonghorn(ctx, w, plan, func(done release.Released) { r.eventBoth(s, done.Reason, done.Message) }); err != nil {
		return err
	}
	if !plan.StrategyWrites() {
		return nil
	}
	return release.Releasers[plan.Strategy](ctx, w, plan, func(done release.Released) {
		for range done.Volumes {
			r.Metrics.AttachmentReleased(string(plan.Strategy))
		}
		r.eventBoth(s, done.Reason, done.Message)
	})
}

// actOnDelegate passes NHC's time-out on to the delegate, replaces a stale
// one, or creates it, as decided.
func (r *Reconciler) actOnDelegate(ctx context.Context, s *scope) error {
	d, delegate := s.decision, r.delegate()
	if d.TimeOutDelegate {
		if err := delegate.MarkTimedOut(ctx, s.rem); err != nil {
			return err
		}
	}
	if d.DeleteDelegate {
		logf.FromContext(ctx).Info("Deleting delegate fencing CR: its success belongs to an earlier failure", "delegate", s.obs.Evidence.DelegateRef)
		if err := delegate.Delete(ctx, s.rem); err != nil {
			return err
		}
	}
	if d.CreateDelegate {
		return r.createDelegate(ctx, s)
	}
	return nil
}

// confirmNode reads the node uncached right before a destructive write and
// drops the pass unless the decision saw that very version of it: its
// readiness, taints, heartbeat and volumesInUse are what the gate judged.
// The node writes are also locked on that version.
func (r *Reconciler) confirmNode(ctx context.Context, s *scope) error {
	fresh := &corev1.Node{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: s.nodeName}, fresh); err != nil {
		return fmt.Errorf("reading node %s before acting: %w", s.nodeName, err)
	}
	if fresh.ResourceVersion != s.node.ResourceVersion {
		logf.FromContext(ctx).V(1).Info("Dropping a decision made on a stale node", "cached", s.node.ResourceVersion,
			"current", fresh.ResourceVersion)
		return errCacheBehind
	}
	return nil
}

func (r *Reconciler) createDelegate(ctx context.Context, s *scope) error {
	d := r.delegate()
	logf.FromContext(ctx).Info("Creating delegate fencing CR", "kind", s.rem.Spec.Fencing.Delegate.Kind)
	name, err := d.Create(ctx, s.rem, s.nodeName)
	var invalid *fencing.DelegateError
	if errors.As(err, &invalid) {
		// Recorded in the Fenced condition on the next pass; nothing was created.
		events.WarningEvent(r.Recorder, s.rem, s3gwv1alpha1.ReasonInvalidDelegate, invalid.Reason)
		return nil
	}
	if err != nil {
		return err
	}
	kind := strings.TrimSuffix(s.rem.Spec.Fencing.Delegate.Kind, "Template")
	s.createdDelegate = &failover.RemediatorCR{Kind: kind, Name: name}
	events.NormalEventf(r.Recorder, s.rem, EventDelegateCreated, "Created %s %s to fence node %s", kind, name, s.nodeName)
	return nil
}

func (r *Reconciler) evict(ctx context.Context, s *scope, t failover.Target) error {
	log := logf.FromContext(ctx).WithValues("Pod", klog.KRef(t.Namespace, t.Name))
	log.Info("Force-deleting s3gw pod")
	deleted, err := workloads.ForceDelete(ctx, r.Client, t.Namespace, t.Name, t.UID)
	if err != nil {
		return err
	}
	s.forceDeleted++
	r.own.deleted(client.ObjectKeyFromObject(s.rem), t.UID)
	if !deleted {
		return nil // already gone from the API
	}
	r.Metrics.PodEvicted()
	r.eventBoth(s, EventPodEvicted, "Force-deleted s3gw pod "+t.Namespace+"/"+t.Name+" from the failed node")
	return nil
}

// eventBoth records a Normal event on the CR and on the Node.
func (r *Reconciler) eventBoth(s *scope, reason, message string) {
	events.NormalEvent(r.Recorder, s.rem, reason, message)
	if s.node != nil {
		events.NormalEvent(r.Recorder, s.node, reason, message)
	}
}
