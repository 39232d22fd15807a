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
	"slices"

	"github.com/medik8s/common/pkg/events"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/step"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// errCacheBehind: the cache lagged behind the node the decision was about;
// the step is dropped and runs again on fresh data.
var errCacheBehind = errors.New("the cached node is older than the API's")

// act performs the decision's actions in the order the step gave them and
// stops at the first error. It decides nothing: each action goes to the
// adapter that makes it — the core's own force delete and Longhorn detach,
// an evidence source's (internal/fencing) or a release strategy's
// (internal/attachments). Every action is idempotent: repeated after a
// crash, it finds the work done and does nothing. The node is read uncached
// first if an action may only be made on the node the decision saw.
func (r *Reconciler) act(ctx context.Context, s *scope) error {
	d := s.decision
	if slices.ContainsFunc(d.Actions, failover.Action.NeedsCurrentNode) {
		if err := r.confirmNode(ctx, s); err != nil {
			return err
		}
	}
	if d.Gate.Disabled && d.Destructive() {
		logf.FromContext(ctx).Info("Fencing is disabled: acting without fencing evidence (unsafe)")
		events.WarningEvent(r.Recorder, s.rem, EventFencingDisabled,
			"fencing.mode is Disabled: evicting and releasing without fencing evidence")
	}
	for _, a := range d.Actions {
		if err := r.perform(ctx, s, a); err != nil {
			return err
		}
	}
	return nil
}

// perform makes one action through the adapter that owns it.
func (r *Reconciler) perform(ctx context.Context, s *scope, a failover.Action) error {
	switch {
	case a.Kind == failover.Evict:
		return r.evict(ctx, s, *a.Target)
	case a.Kind == failover.DetachInLonghorn:
		return attachments.DetachInLonghorn(ctx, r.attachmentsWrite(s), a.Volumes, r.announce(s))
	case a.Strategy != "":
		announce := r.announce(s)
		return attachments.Perform(ctx, r.attachmentsWrite(s), a, func(done attachments.Released) {
			for range done.Volumes {
				r.Metrics.AttachmentReleased(string(a.Strategy))
			}
			announce(done)
		})
	case a.Source != "":
		done, err := fencing.Perform(ctx, r.fencingInput(s), a)
		if err != nil {
			return err
		}
		if done.Created != nil {
			s.memory = step.Created(s.memory, *done.Created, s.now.Time)
		}
		switch {
		case done.Reason == "":
		case done.Warning:
			events.WarningEvent(r.Recorder, s.rem, done.Reason, done.Message)
		default:
			events.NormalEvent(r.Recorder, s.rem, done.Reason, done.Message)
		}
		return nil
	}
	return fmt.Errorf("no adapter makes action %s", a.Kind)
}

// attachmentsWrite is what the release strategies' adapters write with.
func (r *Reconciler) attachmentsWrite(s *scope) attachments.Write {
	return attachments.Write{Client: r.Client, Node: s.node, Owner: s.rem.UID, Remediation: s.rem.Namespace + "/" + s.rem.Name,
		Now: s.now, LonghornNamespace: s.rem.Spec.Release.LonghornNamespaceOrDefault()}
}

// announce records each write an adapter made as an event on the CR and on
// the node.
func (r *Reconciler) announce(s *scope) func(attachments.Released) {
	return func(done attachments.Released) { r.eventBoth(s, done.Reason, done.Message) }
}

// confirmNode reads the node uncached right before a destructive write and
// drops the step unless the decision saw that very version of it: its
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

// evict force-deletes a target's pod, by UID.
func (r *Reconciler) evict(ctx context.Context, s *scope, t failover.Target) error {
	log := logf.FromContext(ctx).WithValues("Pod", klog.KRef(t.Namespace, t.Name))
	log.Info("Force-deleting s3gw pod")
	deleted, err := workloads.ForceDelete(ctx, r.Client, t.Namespace, t.Name, t.UID)
	if err != nil {
		return err
	}
	r.own.Deleted(client.ObjectKeyFromObject(s.rem), t.UID)
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
