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

package attachrules

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// uniquePVC1 is how kubelet and the attach-detach controller name volume
// handle "pvc-1" of Longhorn's driver, spelled out so the tests pin it.
const uniquePVC1 corev1.UniqueVolumeName = "kubernetes.io/csi/driver.longhorn.io^pvc-1"

type nodeOption func(*corev1.Node)

func inUse(names ...corev1.UniqueVolumeName) nodeOption {
	return func(n *corev1.Node) { n.Status.VolumesInUse = names }
}

func attached(names ...corev1.UniqueVolumeName) nodeOption {
	return func(n *corev1.Node) {
		for _, name := range names {
			n.Status.VolumesAttached = append(n.Status.VolumesAttached, corev1.AttachedVolume{Name: name})
		}
	}
}

func tainted(key string, effect corev1.TaintEffect) nodeOption {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: "nodeshutdown", Effect: effect})
	}
}

func node(opts ...nodeOption) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	for _, o := range opts {
		o(n)
	}
	return n
}

// The golden values are sha256(handle + "driver.longhorn.io" + node),
// computed with sha256sum.
func TestAttachmentName(t *testing.T) {
	for _, tc := range []struct{ handle, node, want string }{
		{"pvc-0a1b2c3d", "node-a", "csi-ab1af63c2b17478c0922cb1ddb5550d338c4f227f9843183b99f8e85451f69c4"},
		{"pvc-0a1b2c3d", "node-b", "csi-2e03d372807e2b1ce60181168f69e3cabd43d314442f269286c999378b7f5727"},
	} {
		if got := AttachmentName(tc.handle, tc.node); got != tc.want {
			t.Errorf("AttachmentName(%q, %q) = %s, want %s", tc.handle, tc.node, got, tc.want)
		}
	}
}

func TestOutOfService(t *testing.T) {
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want bool
	}{
		{"no taints", node(), false},
		{"out-of-service NoExecute", node(tainted(corev1.TaintNodeOutOfService, corev1.TaintEffectNoExecute)), true},
		{"out-of-service with another effect: the key is enough", node(tainted(corev1.TaintNodeOutOfService, corev1.TaintEffectNoSchedule)), true},
		{"unreachable is not out of service", node(tainted(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OutOfService(tc.node); got != tc.want {
				t.Errorf("OutOfService() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestADCDetaches(t *testing.T) {
	oos := tainted(corev1.TaintNodeOutOfService, corev1.TaintEffectNoExecute)
	for _, tc := range []struct {
		name    string
		node    *corev1.Node
		usedBy  bool
		want    bool
		because string
	}{
		{"unused and not in use: normal detach", node(), false, true, "nothing holds the volume"},
		{"other volumes in use do not hold it", node(inUse("kubernetes.io/csi/driver.longhorn.io^pvc-2")), false, true, "only its own entry counts"},
		{"still in volumesInUse: waits for unmount", node(inUse(uniquePVC1)), false, false, "the kubelet may still have it mounted"},
		{"in use but out of service: force detach", node(inUse(uniquePVC1), oos), false, true, "the taint skips the mount check"},
		{"a pod on the node uses it", node(), true, false, "the volume is still desired there"},
		{"a pod uses it, even out of service", node(inUse(uniquePVC1), oos), true, false, "the taint does not override a pod in the API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ADCDetaches(tc.node, "pvc-1", tc.usedBy); got != tc.want {
				t.Errorf("ADCDetaches() = %v, want %v: %s", got, tc.want, tc.because)
			}
		})
	}
}

func TestMultiAttach(t *testing.T) {
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	for _, tc := range []struct {
		name       string
		modes      []corev1.PersistentVolumeAccessMode
		attachedTo []string
		want       bool
	}{
		{"RWO attached nowhere", rwo, nil, false},
		{"RWO attached to another node", rwo, []string{"dead"}, true},
		{"RWO attached to the node itself", rwo, []string{"a"}, false},
		{"RWO attached here and elsewhere", rwo, []string{"a", "dead"}, true},
		{"RWOP is exclusive", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}, []string{"dead"}, true},
		{"RWX shares", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, []string{"dead"}, false},
		{"ROX shares", []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}, []string{"dead"}, false},
		{"RWO with RWX shares", []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteMany}, []string{"dead"}, false},
		{"no access modes: the controller cannot tell, so it allows", nil, []string{"dead"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MultiAttach(tc.modes, tc.attachedTo, "a"); got != tc.want {
				t.Errorf("MultiAttach(%v, %v, a) = %v, want %v", tc.modes, tc.attachedTo, got, tc.want)
			}
		})
	}
}

func TestPublishTicketIsNamedAfterItsAttachment(t *testing.T) {
	name := AttachmentName("pvc-1", "a")
	ticket := PublishTicket(name, "a")
	if ticket.ID != name || ticket.Type != "csi-attacher" || ticket.NodeID != "a" {
		t.Errorf("PublishTicket() = %+v, want a csi-attacher ticket %s for a", ticket, name)
	}
	if got, ok := TicketAttachment(ticket); !ok || got != name {
		t.Errorf("TicketAttachment(PublishTicket(%s)) = %q, %v; want its own VolumeAttachment", name, got, ok)
	}
}

func TestTicketAttachment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ticket *longhorn.AttachmentTicket
		want   string
		wantOK bool
	}{
		{"csi-attacher ticket: its VolumeAttachment", &longhorn.AttachmentTicket{ID: "csi-1", Type: "csi-attacher", NodeID: "a"}, "csi-1", true},
		{"Longhorn UI ticket: not the attacher's", &longhorn.AttachmentTicket{ID: "longhorn-ui", Type: "longhorn-api", NodeID: "a"}, "", false},
		{"backup ticket: not the attacher's", &longhorn.AttachmentTicket{ID: "backup-1", Type: "backup-controller", NodeID: "a"}, "", false},
		{"nil ticket", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TicketAttachment(tc.ticket)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("TicketAttachment() = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func longhornNode(status, reason string) *longhorn.Node {
	return &longhorn.Node{Status: longhorn.NodeStatus{Conditions: []longhorn.Condition{
		{Type: "Schedulable", Status: "True"},
		{Type: "Ready", Status: status, Reason: reason},
	}}}
}

func TestLonghornNodeReady(t *testing.T) {
	for _, tc := range []struct {
		name string
		node *longhorn.Node
		want bool
	}{
		{"Ready", longhornNode("True", ""), true},
		{"down", longhornNode("False", "KubernetesNodeNotReady"), false},
		{"manager down", longhornNode("False", "ManagerPodDown"), false},
		{"no Ready condition yet", &longhorn.Node{}, false},
		{"missing", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LonghornNodeReady(tc.node); got != tc.want {
				t.Errorf("LonghornNodeReady() = %v, want %v", got, tc.want)
			}
		})
	}
}

func volume(specNode, currentNode string) *longhorn.Volume {
	return &longhorn.Volume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-1"},
		Spec: longhorn.VolumeSpec{NodeID: specNode}, Status: longhorn.VolumeStatus{CurrentNodeID: currentNode}}
}

func TestPublishRefusal(t *testing.T) {
	ready, down := longhornNode("True", ""), longhornNode("False", "KubernetesNodeNotReady")
	for _, tc := range []struct {
		name   string
		target *longhorn.Node
		volume *longhorn.Volume
		want   string
	}{
		{"ticket not written yet, target Ready", ready, nil, ""},
		{"ticket not written yet, target down", down, nil, "node a is not ready, couldn't attach volume"},
		{"ticket not written yet, no Longhorn Node", nil, nil, "node a is not ready, couldn't attach volume"},
		{"detached volume, target Ready", ready, volume("", ""), ""},
		{"attached to the target already", ready, volume("a", "a"), ""},
		{"still attached to another node", ready, volume("dead", "dead"), "volume pvc-1 is attached to different node dead, waiting for it to detach"},
		{"detaching from another node", ready, volume("", "dead"), "volume pvc-1 is attached to different node dead, waiting for it to detach"},
		{"attaching to another node", ready, volume("b", ""), "volume pvc-1 is attached to different node b, waiting for it to detach"},
		{"another node first, then readiness", down, volume("dead", "dead"), "volume pvc-1 is attached to different node dead, waiting for it to detach"},
		{"free volume, target down", down, volume("", ""), "node a is not ready, couldn't attach volume"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PublishRefusal(tc.target, tc.volume, "a"); got != tc.want {
				t.Errorf("PublishRefusal() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMountAllowed(t *testing.T) {
	va := func(attachedStatus, deleting bool) *storagev1.VolumeAttachment {
		v := &storagev1.VolumeAttachment{Status: storagev1.VolumeAttachmentStatus{Attached: attachedStatus}}
		if deleting {
			v.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
		}
		return v
	}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		va   *storagev1.VolumeAttachment
		want bool
	}{
		{"reported, listed, attached", node(inUse(uniquePVC1), attached(uniquePVC1)), va(true, false), true},
		{"not yet reported in use", node(attached(uniquePVC1)), va(true, false), false},
		{"not yet listed in volumesAttached", node(inUse(uniquePVC1)), va(true, false), false},
		{"another volume listed", node(inUse(uniquePVC1), attached("kubernetes.io/csi/driver.longhorn.io^pvc-2")), va(true, false), false},
		{"VolumeAttachment not attached yet", node(inUse(uniquePVC1), attached(uniquePVC1)), va(false, false), false},
		{"VolumeAttachment being deleted", node(inUse(uniquePVC1), attached(uniquePVC1)), va(true, true), false},
		{"no VolumeAttachment", node(inUse(uniquePVC1), attached(uniquePVC1)), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MountAllowed(tc.node, "pvc-1", tc.va); got != tc.want {
				t.Errorf("MountAllowed() = %v, want %v", got, tc.want)
			}
		})
	}
}
