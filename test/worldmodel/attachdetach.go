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

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// kube-controller-manager's attach-detach controller (ADC) with its
// default timers (attach-detach-routes-measured.md, longhorn-and-node-failure.md §2.2).
const (
	maxWaitForUnmount = 6 * time.Minute
	adcSyncPeriod     = 60
)

type attachKey struct{ pv, node string }

// attachDetach is the ADC's in-memory state.
type attachDetach struct {
	// actual is what it believes attached; only its own detaches and its
	// periodic sync remove entries.
	actual []attachKey
	// detaching are its own detaches in flight (VolumeAttachment deleted).
	detaching []attachKey
	// detachRequested is when each actual entry stopped being desired.
	detachRequested map[attachKey]time.Time
	multiAttach     map[attachKey]bool
}

func newAttachDetach() *attachDetach {
	return &attachDetach{detachRequested: map[attachKey]time.Time{}, multiAttach: map[attachKey]bool{}}
}

// desiredAttachments come from the pods in the API bound to a node,
// terminating ones included: their stale status still says running.
func (w *World) desiredAttachments() []attachKey {
	var out []attachKey
	for _, p := range w.api.pods() {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if v := w.volumeOfClaim(claimOf(p)); v != nil {
			out = append(out, attachKey{pv: v.Name, node: p.Spec.NodeName})
		}
	}
	return out
}

func (w *World) attachDetach() {
	a := w.adc
	desired := w.desiredAttachments()
	for _, k := range w.adcKnown() {
		if !slices.Contains(desired, k) {
			w.adcDetach(k)
		} else {
			delete(a.detachRequested, k)
		}
	}
	for _, k := range desired {
		if !slices.Contains(a.actual, k) {
			w.adcAttach(k)
		}
	}
	if w.tick(adcSyncPeriod) {
		w.adcVerifyAttached()
	}
}

// adcKnown is what the ADC may detach: its actual state plus attachments
// it started that never completed (their state is uncertain).
func (w *World) adcKnown() []attachKey {
	known := slices.Clone(w.adc.actual)
	for _, va := range w.api.kubeAttachments() {
		k := attachKey{pv: *va.Spec.Source.PersistentVolumeName, node: va.Spec.NodeName}
		if !slices.Contains(known, k) {
			known = append(known, k)
		}
	}
	return known
}

// adcDetach detaches an undesired volume, unless the node still reports it
// in use: then only the out-of-service taint or, on an unhealthy node, the
// 6-minute timeout force it, the latter unless kube-controller-manager runs
// with --disable-force-detach-on-timeout (reconciler.go, reconcile:
// forceDetach := !isHealthy && maxWaitForUnmountDurationExpired &&
// !disableForceDetachOnTimeout). A deleted Node keeps the volumesInUse it
// last reported (pkg/controller/volume/attachdetach,
// attach_detach_controller.go, nodeDelete: processVolumesInUse with the
// deleted object's status); it is taken as still reporting the volume,
// and as not Ready for the timeout (an assumption: the reconciler's
// health check of a missing node was not read).
func (w *World) adcDetach(k attachKey) {
	a := w.adc
	va := w.api.kubeAttachment(attachmentName(k.pv, k.node))
	if slices.Contains(a.detaching, k) {
		if va == nil {
			a.actual = slices.DeleteFunc(a.actual, func(x attachKey) bool { return x == k })
			a.detaching = slices.DeleteFunc(a.detaching, func(x attachKey) bool { return x == k })
			delete(a.detachRequested, k)
		}
		return
	}
	requested, ok := a.detachRequested[k]
	if !ok {
		requested = w.now
		a.detachRequested[k] = requested
	}
	node := w.api.node(k.node)
	if node == nil || slices.Contains(node.Status.VolumesInUse, longhorn.UniqueVolumeName(k.pv)) {
		forceOnTimeout := !w.sc.Neighbours.DisableForceDetachOnTimeout
		timedOut := forceOnTimeout && !nodeReady(node) && !w.now.Before(requested.Add(maxWaitForUnmount))
		if !outOfService(node) && !timedOut {
			if forceOnTimeout && !nodeReady(node) {
				w.wakeAt(requested.Add(maxWaitForUnmount))
			}
			return
		}
		w.tracef("kcm", "ADC force-detaches %s from %s (out-of-service taint or 6 min timeout)", k.pv, k.node)
	}
	a.detaching = append(a.detaching, k)
	if va != nil && va.DeletionTimestamp == nil {
		w.tracef("kcm", "ADC detaches %s from %s", k.pv, k.node)
		w.api.markDeleted(va)
	}
}

// adcAttach attaches a desired volume, waiting (Multi-Attach) while an RWO
// volume is attached to another node in its own view.
func (w *World) adcAttach(k attachKey) {
	a := w.adc
	for _, other := range a.actual {
		if other.pv == k.pv && other.node != k.node {
			if !a.multiAttach[k] {
				a.multiAttach[k] = true
				w.tracef("kcm", "Multi-Attach error for %s on %s: attached to %s", k.pv, k.node, other.node)
			}
			return
		}
	}
	va := w.api.kubeAttachment(attachmentName(k.pv, k.node))
	switch {
	case va == nil:
		w.api.create(&storagev1.VolumeAttachment{
			ObjectMeta: metav1.ObjectMeta{Name: attachmentName(k.pv, k.node)},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: longhorn.CSIDriverName, NodeName: k.node,
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(k.pv)}},
		})
		w.tracef("kcm", "ADC attaches %s to %s", k.pv, k.node)
	case va.DeletionTimestamp == nil && va.Status.Attached:
		a.actual = append(a.actual, k)
		delete(a.multiAttach, k)
	}
}

// adcVerifyAttached is the periodic sync: attachments whose
// VolumeAttachment is gone or not attached leave the actual state.
func (w *World) adcVerifyAttached() {
	a := w.adc
	for _, k := range slices.Clone(a.actual) {
		va := w.api.kubeAttachment(attachmentName(k.pv, k.node))
		if va == nil || !va.Status.Attached {
			a.actual = slices.DeleteFunc(a.actual, func(x attachKey) bool { return x == k })
			a.detaching = slices.DeleteFunc(a.detaching, func(x attachKey) bool { return x == k })
			delete(a.detachRequested, k)
			w.tracef("kcm", "ADC sync: %s no longer attached to %s", k.pv, k.node)
		}
	}
}

// externalAttacher runs Longhorn's CSI ControllerPublish/Unpublish for
// VolumeAttachments: a ticket per attachment, attached once Longhorn
// satisfies it; on deletion the ticket goes, then the finalizer.
func (w *World) externalAttacher() {
	for _, va := range w.api.kubeAttachments() {
		pv := *va.Spec.Source.PersistentVolumeName
		lva := w.api.longhornAttachment(pv)
		if va.DeletionTimestamp != nil {
			if _, ok := lva.Spec.AttachmentTickets[va.Name]; ok {
				delete(lva.Spec.AttachmentTickets, va.Name)
				w.api.touch(lva)
				w.tracef("csi", "ticket for %s on %s removed", pv, va.Spec.NodeName)
			}
			va.Finalizers = slices.DeleteFunc(va.Finalizers, func(f string) bool { return f == externalAttacherFinalizer })
			w.api.touch(va)
			continue
		}
		if va.Status.Attached {
			continue
		}
		w.controllerPublish(va, lva)
	}
}

func (w *World) controllerPublish(va *storagev1.VolumeAttachment, lva *longhorn.VolumeAttachment) {
	if !slices.Contains(va.Finalizers, externalAttacherFinalizer) {
		va.Finalizers = append(va.Finalizers, externalAttacherFinalizer)
		w.api.touch(va)
	}
	if c := longhornReady(w.api.longhornNode(va.Spec.NodeName)); c.Status != statusTrue {
		return // "node is not ready, couldn't attach volume"
	}
	if _, ok := lva.Spec.AttachmentTickets[va.Name]; !ok {
		if lva.Spec.AttachmentTickets == nil {
			lva.Spec.AttachmentTickets = map[string]*longhorn.AttachmentTicket{}
		}
		lva.Spec.AttachmentTickets[va.Name] = &longhorn.AttachmentTicket{ID: va.Name, Type: longhorn.TicketTypeCSIAttacher,
			NodeID: va.Spec.NodeName, Parameters: map[string]string{"disableFrontend": "false", "lastAttachedBy": ""}}
		w.api.touch(lva)
		w.tracef("csi", "ticket for %s on %s added", *va.Spec.Source.PersistentVolumeName, va.Spec.NodeName)
		return
	}
	if st := lva.Status.AttachmentTicketStatuses[va.Name]; st != nil && st.Satisfied {
		va.Status.Attached = true
		w.api.touch(va)
	}
}
