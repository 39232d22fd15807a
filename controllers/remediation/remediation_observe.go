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

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/step"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// scope carries everything one step read, decided and wrote.
type scope struct {
	rem      *s3gwv1alpha1.S3GWRemediation
	nodeName string
	// node is the node as the step read it; the step's node writes update it.
	node *corev1.Node
	now  metav1.Time
	// targets are the targets the step looked at: those the memory
	// records, then those found on the node now, in the memory's order.
	targets []s3gwv1alpha1.RecordedTarget
	// attachments are Longhorn's VolumeAttachments on the node, read once.
	attachments []storagev1.VolumeAttachment
	// storage reads the pods, volumes and replicas of the step.
	storage *storage.Pass
	obs     failover.Observation
	// decision and memory are what step.Step returned; the memory also
	// records a fencer CR the step created.
	decision step.Decision
	memory   step.Memory
	// before and after are the status the step read and the one it
	// derived, told once written.
	before, after s3gwv1alpha1.S3GWRemediationStatus
}

func timedOut(rem *s3gwv1alpha1.S3GWRemediation) bool {
	_, ok := rem.Annotations[annotations.NhcTimedOut]
	return ok
}

// observe reads the world into an Observation, and writes nothing, not
// even into the CR. What to look at comes from the memory: the recorded
// targets. Reads stop early where the decision cannot use them (missing
// node, timed out, excluded node).
func (r *Reconciler) observe(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, nodeName string, node *corev1.Node) (*scope, error) {
	s := &scope{rem: rem, nodeName: nodeName, node: node, now: metav1.NewTime(r.Clock.Now()), targets: rem.Status.Memory.Targets}
	s.obs = failover.Observation{Now: s.now.Time, Spec: rem.Spec, TimedOut: timedOut(rem)}
	if node == nil {
		return s, nil
	}
	lease, err := storage.NodeLease(ctx, r.Client, nodeName)
	if err != nil {
		return nil, err
	}
	s.obs.Node = &failover.Node{Name: node.Name, Ready: nodeReady(node), Heartbeat: storage.Heartbeat(node, lease),
		Excluded: failover.ExcludedFromRemediation(node.Labels)}
	observeOutOfServiceTaint(s)
	switch {
	case s.obs.TimedOut:
		// No new step starts: only what the sources started is read, to
		// pass NHC's time-out on.
		return s, fencing.ObserveStarted(ctx, r.fencingInput(s), &s.obs.Evidence)
	case s.obs.Node.Excluded:
		return s, nil
	}

	s.storage = r.storageObserver().Pass(rem.Spec, s.now.Time)
	if err := s.storage.ReadLonghorn(ctx); err != nil {
		return nil, err
	}
	s.obs.LonghornAvailable = s.storage.LonghornAvailable
	if s.obs.LonghornAvailable {
		r.watchLonghorn(ctx)
	}
	// One list serves every target volume and the orphan search.
	if s.attachments, err = attachments.NodeAttachments(ctx, r.Client, nodeName); err != nil {
		return nil, err
	}
	if err := r.observeTargets(ctx, s); err != nil {
		return nil, err
	}
	if !s.obs.Node.Ready {
		if err := r.observeOtherRemediations(ctx, s); err != nil {
			return nil, err
		}
	}
	if err := r.observeEvidence(ctx, s); err != nil {
		return nil, err
	}
	return s, nil
}

// observeEvidence reads the fencing evidence sources the spec enables,
// through their adapters (fencing.Adapters), and watches what they read.
func (r *Reconciler) observeEvidence(ctx context.Context, s *scope) error {
	for _, gvk := range fencing.Watched(s.rem.Spec.Fencing) {
		r.watchEvidence(ctx, gvk)
	}
	return fencing.Observe(ctx, r.fencingInput(s), &s.obs.Evidence)
}

// delegate reads and writes the delegate fencing CR: observed through the
// cache, acted on after an uncached read.
func (r *Reconciler) delegate() fencing.Delegate {
	return fencing.Delegate{Client: r.Client, Live: r.APIReader}
}

// fencingInput is what the evidence sources' adapters read and write with.
func (r *Reconciler) fencingInput(s *scope) fencing.Input {
	return fencing.Input{Client: r.Client, Delegate: r.delegate(), Storage: s.storage, Remediation: s.rem, Node: s.nodeName}
}

// observeOutOfServiceTaint reads the node's out-of-service taint, the
// S3GWRemediation the node's owner annotation names as its owner while it
// names that taint, and whether the annotation is stale.
func observeOutOfServiceTaint(s *scope) {
	wanted := attachments.OutOfServiceTaint()
	owner, stale := attachments.TaintOwnership(s.node, wanted)
	s.obs.Node.StaleTaintOwner = stale
	taint := attachments.FindTaint(s.node, wanted)
	if taint == nil {
		return
	}
	s.obs.Node.OutOfServiceTaint = &failover.Taint{Owner: owner, Ours: owner != "" && owner == s.rem.UID}
	if taint.TimeAdded != nil {
		s.obs.Node.OutOfServiceTaint.TimeAdded = &taint.TimeAdded.Time
	}
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
