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
	"context"
	"fmt"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// runLonghorn runs the CSI attacher and Longhorn for d, a round a second.
func runLonghorn(w *World, d time.Duration) {
	for until := w.now.Add(d); w.now.Before(until); w.now = w.now.Add(time.Second) {
		w.externalAttacher()
		w.longhornVolumes()
		w.instanceManagers()
	}
}

// TestOperatorTicketRemovalDetachesAsAnUnpublish: the two-step release's
// first step, a merge patch deleting the failed node's csi ticket, detaches
// the volume as ControllerUnpublishVolume would, while the Kubernetes
// VolumeAttachment stays attached (the hold); the later ADC detach is a
// no-op for Longhorn, and the replacement's publish attaches at once.
func TestOperatorTicketRemovalDetachesAsAnUnpublish(t *testing.T) {
	w := replicaWorld(t, nil)
	v := w.volumes[0]
	failed := w.nodes[0]
	w.powerOff(failed, "test")
	markLonghornDown(w, failed.Name, true)
	ticket := attachmentName(v.Name, failed.Name)

	c := newAPIClient(w.api)
	c.afterWrite = func(verb string, old, obj client.Object) { w.audit(verb, old, obj) }
	lva := w.api.longhornAttachment(v.Name)
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"attachmentTickets":{%q:null}}}`, lva.ResourceVersion, ticket)
	if err := c.Patch(context.Background(), &longhorn.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{
		Namespace: longhornNamespace, Name: v.Name}}, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.api.longhornAttachment(v.Name).Spec.AttachmentTickets[ticket]; ok {
		t.Fatal("a merge patch setting the ticket to null left it in place")
	}
	if acts := w.stats.acts[v.Index]; len(acts) != 1 || acts[0].node != failed.Name {
		t.Errorf("the ticket removal is not recorded as the operator's destructive act on %s: %+v", failed.Name, acts)
	}

	runLonghorn(w, 5*time.Second)
	lv := w.api.longhornVolume(v.Name)
	if lv.Status.State != stateDetached || lv.Status.CurrentNodeID != "" || v.current != nil {
		t.Fatalf("volume %s on %q, engine %v: want detached", lv.Status.State, lv.Status.CurrentNodeID, v.current)
	}
	for _, r := range v.Replicas {
		if r.Running || w.api.longhornReplica(r.Name).Status.CurrentState != stateStopped {
			t.Errorf("replica %s on %s running %v: want stopped", r.Name, r.Node.Name, r.Running)
		}
		if im := w.api.longhornInstanceManager(r.Node.Name); len(im.Status.InstanceReplicas) != 0 {
			t.Errorf("%s's instance manager still lists %v", r.Node.Name, im.Status.InstanceReplicas)
		}
	}
	old := w.api.kubeAttachment(ticket)
	if old == nil || !old.Status.Attached || old.DeletionTimestamp != nil {
		t.Fatalf("the Kubernetes VolumeAttachment on %s no longer holds the volume: %+v", failed.Name, old)
	}

	rv := w.api.longhornAttachment(v.Name).ResourceVersion
	w.api.markDeleted(old) // the ADC's detach, after the operator's release
	runLonghorn(w, time.Second)
	if w.api.kubeAttachment(ticket) != nil || w.api.longhornAttachment(v.Name).ResourceVersion != rv {
		t.Errorf("the unpublish after the ticket removal is not a no-op for Longhorn")
	}

	target := w.nodes[1]
	w.api.create(&storagev1.VolumeAttachment{ // the ADC's attach for the replacement
		ObjectMeta: metav1.ObjectMeta{Name: attachmentName(v.Name, target.Name)},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: longhorn.CSIDriverName, NodeName: target.Name,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(v.Name)}},
	})
	runLonghorn(w, 5*time.Second)
	if va := w.api.kubeAttachment(attachmentName(v.Name, target.Name)); !va.Status.Attached {
		t.Errorf("the replacement's VolumeAttachment is not attached")
	}
	if e := v.current; e == nil || e.Node != target || !e.Running {
		t.Errorf("no engine runs on %s: %+v", target.Name, e)
	}
}
