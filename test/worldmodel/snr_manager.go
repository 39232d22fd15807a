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
	"slices"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The SNR manager (self-node-remediation,
// internal/controller/selfnoderemediation_controller.go, ReconcileManager
// and remediateWithResourceRemoval) with the OutOfServiceTaint strategy. It
// keeps its state where SNR does, in status.phase and
// status.timeAssumedRebooted. Its clock is true time: the model's skews are
// for the clocks our operator compares.

const (
	snrFinalizer   = "self-node-remediation.medik8s.io/snr-finalizer"
	snrTaintKey    = "remediation.medik8s.io/self-node-remediation"
	snrPreReboot   = "Pre-Reboot-Completed"
	snrRebooted    = "Reboot-Completed"
	snrFenced      = "Fencing-Completed"
	snrPhaseField  = "phase"
	snrRebootField = "timeAssumedRebooted"
)

func (w *World) selfNodeRemediation() {
	if w.sc.SNR == nil {
		return
	}
	w.snrAgents()
	for _, obj := range w.api.list(gvkSNR) {
		w.snrReconcile(obj.(*unstructured.Unstructured))
	}
}

func (w *World) snrReconcile(cr *unstructured.Unstructured) {
	node := w.api.node(crNodeName(cr))
	if _, timedOut := cr.GetAnnotations()[annotations.NhcTimedOut]; timedOut {
		w.snrStopped(cr, node)
		return
	}
	phase := snrPhase(cr)
	if phase != snrFenced {
		w.snrConditions(cr, statusTrue, "Unknown")
	}
	if node == nil {
		return
	}
	switch phase {
	case "":
		w.snrPrepareReboot(cr, node)
	case snrPreReboot:
		w.snrWaitForReboot(cr)
	case snrRebooted:
		w.snrUseOutOfServiceTaint(cr, node)
	case snrFenced:
		if cr.GetDeletionTimestamp() != nil {
			w.snrRecoverNode(cr, node)
		}
	}
}

// snrStopped: NHC timed the CR out. SNR then does nothing more until the
// CR is deleted, and on deletion removes the out-of-service taint, whoever
// added it, before recoverNode (ReconcileManager, isStoppedByNHC).
func (w *World) snrStopped(cr *unstructured.Unstructured, node *corev1.Node) {
	if cr.GetDeletionTimestamp() == nil {
		w.snrConditions(cr, statusFalse, statusFalse)
		return
	}
	if node != nil {
		w.snrRemoveOutOfService(node, "timed-out "+cr.GetName()+" deleted")
		w.snrRecoverNode(cr, node)
		return
	}
	w.snrRemoveFinalizer(cr)
}

// snrPrepareReboot adds the finalizer (not to a CR already deleted), the
// NoSchedule taint and timeAssumedRebooted (prepareReboot,
// setTimeAssumedRebooted: now plus GetRebootDuration). The node is taken
// to be reboot-capable: an agent runs on every node.
func (w *World) snrPrepareReboot(cr *unstructured.Unstructured, node *corev1.Node) {
	if !slices.Contains(cr.GetFinalizers(), snrFinalizer) {
		if cr.GetDeletionTimestamp() != nil {
			return // addFinalizer: deleted before it began, a no-op
		}
		cr.SetFinalizers(append(cr.GetFinalizers(), snrFinalizer))
	}
	w.addTaint(node, withTimeAdded(corev1.Taint{Key: snrTaintKey, Effect: corev1.TaintEffectNoSchedule}, apiTime(w.now)), "SNR")
	at := w.now.Add(w.sc.SNR.RebootDuration)
	_ = unstructured.SetNestedField(cr.Object, at.UTC().Format(time.RFC3339), fieldStatus, snrRebootField)
	_ = unstructured.SetNestedField(cr.Object, snrPreReboot, fieldStatus, snrPhaseField)
	w.api.touch(cr)
	w.wakeAt(at)
	w.tracef("snr", "%s: pre-reboot completed for %s, assumed rebooted at %.0fs", cr.GetName(), node.Name, at.Sub(w.start).Seconds())
}

// snrWaitForReboot moves on once timeAssumedRebooted has passed, whether
// or not the node rebooted and even if the CR was deleted meanwhile
// (waitForNodeRebooted).
func (w *World) snrWaitForReboot(cr *unstructured.Unstructured) {
	at := snrAssumedRebooted(cr)
	if w.now.Before(at) {
		w.wakeAt(at)
		return
	}
	_ = unstructured.SetNestedField(cr.Object, snrRebooted, fieldStatus, snrPhaseField)
	w.api.touch(cr)
	w.tracef("snr", "%s: node assumed rebooted", cr.GetName())
}

// snrUseOutOfServiceTaint adds the out-of-service taint unless one with its
// key and effect is there, then removes every such taint once no pod on the
// node is terminating and no VolumeAttachment names it, while the CR lives
// and the node may still be down (useOutOfServiceTaint,
// isResourceDeletionCompleted). Until then it waits, up to a minute past
// timeAssumedRebooted; later it keeps the taint until the CR is deleted
// (isResourceDeletionExpired), retrying with backoff, which re-adds it.
func (w *World) snrUseOutOfServiceTaint(cr *unstructured.Unstructured, node *corev1.Node) {
	w.addTaint(node, withTimeAdded(outOfServiceTaint(), apiTime(w.now)), "SNR")
	if !w.snrResourcesDeleted(node.Name) {
		if expiry := snrAssumedRebooted(cr).Add(snrOutOfServiceTimeout); w.now.Before(expiry) {
			w.wakeAt(w.now.Add(basePeriod))
			return
		}
		if cr.GetDeletionTimestamp() == nil {
			return
		}
	}
	w.snrRemoveOutOfService(node, cr.GetName()+": resources deleted or timeout expired")
	_ = unstructured.SetNestedField(cr.Object, snrFenced, fieldStatus, snrPhaseField)
	w.snrConditions(cr, statusFalse, statusTrue)
	w.tracef("snr", "%s: fencing completed", cr.GetName())
}

// snrResourcesDeleted: no pod on the node is terminating and no
// VolumeAttachment names it (isResourceDeletionCompleted).
func (w *World) snrResourcesDeleted(node string) bool {
	for _, p := range w.api.pods() {
		if p.Spec.NodeName == node && podTerminating(p) {
			return false
		}
	}
	for _, va := range w.api.kubeAttachments() {
		if va.Spec.NodeName == node {
			return false
		}
	}
	return true
}

// snrRemoveOutOfService removes every out-of-service NoExecute taint, its
// own or not (removeOutOfServiceTaint, utils.DeleteTaint matches key and
// effect); the model's out-of-service taints are all NoExecute.
func (w *World) snrRemoveOutOfService(node *corev1.Node, why string) {
	if outOfService(node) {
		w.removeTaint(node, corev1.TaintNodeOutOfService)
		w.tracef("snr", "removed the out-of-service taint from %s (%s)", node.Name, why)
	}
}

// snrRecoverNode removes the NoSchedule taint, then the finalizer
// (recoverNode); the out-of-service taint is not its business there.
func (w *World) snrRecoverNode(cr *unstructured.Unstructured, node *corev1.Node) {
	w.removeTaint(node, snrTaintKey)
	w.snrRemoveFinalizer(cr)
}

func (w *World) snrRemoveFinalizer(cr *unstructured.Unstructured) {
	if !slices.Contains(cr.GetFinalizers(), snrFinalizer) {
		return
	}
	w.dropFinalizer(cr, snrFinalizer)
	w.tracef("snr", "%s deleted", cr.GetName())
}

// snrConditions sets Processing and Succeeded as updateConditions does.
func (w *World) snrConditions(cr *unstructured.Unstructured, processing, succeeded string) {
	if conditionStatus(cr, "Processing") == metav1.ConditionStatus(processing) &&
		conditionStatus(cr, "Succeeded") == metav1.ConditionStatus(succeeded) {
		return
	}
	setUnstructuredCondition(cr, "Processing", processing, w.now)
	setUnstructuredCondition(cr, "Succeeded", succeeded, w.now)
	w.api.touch(cr)
}

func snrPhase(cr *unstructured.Unstructured) string {
	phase, _, _ := unstructured.NestedString(cr.Object, fieldStatus, snrPhaseField)
	return phase
}

func snrAssumedRebooted(cr *unstructured.Unstructured) time.Time {
	s, _, _ := unstructured.NestedString(cr.Object, fieldStatus, snrRebootField)
	at, _ := time.Parse(time.RFC3339, s)
	return at
}
