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

package worldmodel

import (
	"math/rand/v2"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	"github.com/medik8s/common/pkg/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// A second S3GWRemediation of one node, under other rules: an admin who,
// with s3gw still down minutes after NHC's remediation began, creates one
// by hand from a runbook spec. Nothing holds it back: NHC's node lease
// serialises NodeHealthChecks only (node-healthcheck-operator,
// internal/controller/resources/lease.go, ObtainNodeLease), and real NHC
// leaves two of its own CRs active only once the first has Succeeded=True
// (nodehealthcheck_controller.go, remediate: no nhc-timed-out annotation
// on a succeeded CR), when s3gw has already moved. NHC deletes only the
// CRs it owns (internal/controller/resources/manager.go, HandleHealthyNode:
// IsOwner), so the admin deletes theirs.

// ManualSpec is the admin's hand-made remediation.
type ManualSpec struct {
	// After is how long after NHC's CR the admin steps in, if s3gw has not
	// run elsewhere by then.
	After time.Duration
	Spec  s3gwv1alpha1.S3GWRemediationSpec
}

// manualSuffix names the admin's CR after the node, apart from NHC's.
const manualSuffix = "-by-admin"

// generateManual draws the admin in a fifth of the classic-mode episodes:
// an escalation times NHC's CR out while the admin's may still act (the
// admin would have to race it). The runbook's spec has fencing disabled:
// "move it now".
func generateManual(r *rand.Rand, sc *Scenario, p Policy) *ManualSpec {
	if sc.NHC.Escalating || !chance(r, 0.2) {
		return nil
	}
	p.Mode = s3gwv1alpha1.FencingModeDisabled
	return &ManualSpec{After: between(r, time.Minute, 6*time.Minute), Spec: generateSpec(r, p, sc.FAR.Installed)}
}

// adminRemediates creates the admin's CR once NHC's has been pending for
// After without moving s3gw, and deletes it once the node is Ready again or
// NHC's CR failed. It runs before NHC in a step, so NHC never times out or
// deletes its own CR while the admin's is left alone under its rules.
func (w *World) adminRemediates() {
	if w.sc.Manual == nil {
		return
	}
	for _, n := range w.nodes {
		name := n.Name + manualSuffix
		mine := w.api.get(gvkRemediation, remediationNamespace, name)
		nhcs := w.activeNHCRemediation(n.Name)
		switch {
		case mine != nil && mine.GetDeletionTimestamp() == nil && (nhcs == nil || nodeReady(w.api.node(n.Name))):
			w.tracef("admin", "deleted %s", name)
			w.api.markDeleted(mine)
		case mine == nil && nhcs != nil && !nodeReady(w.api.node(n.Name)) && w.gatewayStillOn(n.Name):
			if due := nhcs.GetCreationTimestamp().Add(w.sc.Manual.After); w.now.Before(due) {
				w.wakeAt(due)
				continue
			}
			w.createManual(n.Name, name)
		}
	}
}

// activeNHCRemediation is NHC's S3GWRemediation for the node while it is
// neither deleted, timed out nor failed (a failed one NHC times out next).
func (w *World) activeNHCRemediation(node string) client.Object {
	for _, cr := range w.nhcOwned(node) {
		if w.api.gvkOf(cr) != gvkRemediation || cr.GetDeletionTimestamp() != nil {
			continue
		}
		if _, timedOut := cr.GetAnnotations()[annotations.NhcTimedOut]; timedOut ||
			conditionStatus(cr, conditions.SucceededType) == metav1.ConditionFalse {
			continue
		}
		return cr
	}
	return nil
}

// gatewayStillOn: an s3gw pod is bound to the node and not terminating.
func (w *World) gatewayStillOn(node string) bool {
	for _, p := range w.api.pods() {
		if p.Spec.NodeName == node && !podTerminating(p) {
			return true
		}
	}
	return false
}

func (w *World) createManual(node, name string) {
	cr := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Namespace: remediationNamespace, Name: name,
		Annotations: map[string]string{annotations.NodeNameAnnotation: node}}, Spec: w.sc.Manual.Spec}
	obj, err := admit(gvkRemediation, cr)
	if err != nil {
		panic(err)
	}
	w.api.create(obj)
	w.tracef("admin", "created %s for %s (fencing %s)", name, node, w.sc.Manual.Spec.Fencing.Mode)
}
