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

package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

const longhornNS = "longhorn-system"

var worldCount atomic.Int32

func readRepoFile(rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join(testenv.RepoRoot(), rel))
}

// world is one scenario's cluster state: its own namespace and node names,
// fixtures for s3gw and Longhorn, and test doubles for the components
// envtest does not run (attach-detach controller, CSI external-attacher,
// ReplicaSet controller, kubelet readiness).
type world struct {
	ctx context.Context
	c   client.Client
	id  string
	ns  string
	// gateways are the s3gw Deployments the ReplicaSet double keeps at one
	// Ready pod on a healthy node.
	gateways []*gateway
	// clock is the one clock of the story: the doubles stamp heartbeats and
	// conditions with it, and the reconciler and NHC read it.
	clock *clocktesting.FakeClock
	// cutOff are the nodes whose longhorn-manager lost the API server: their
	// instance manager's CR stays as it was.
	cutOff map[string]bool
}

func newWorld(ctx context.Context) *world {
	id := fmt.Sprintf("w%d", worldCount.Add(1))
	w := &world{ctx: ctx, c: k8sClient, id: id, ns: "ns-" + id, clock: clocktesting.NewFakeClock(time.Now()),
		cutOff: map[string]bool{}}
	for _, ns := range []string{w.ns, longhornNS} {
		err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	}
	return w
}

// worldLabel marks the scenario's nodes, which its NodeHealthChecks select.
const worldLabel = "test.s3gw-remediation.io/world"

func (w *world) nodeLabels() map[string]string { return map[string]string{worldLabel: w.id} }

// nodeName scopes node names (cluster-scoped) to the scenario.
func (w *world) nodeName(short string) string { return w.id + "-" + short }

// addNode creates a Kubernetes node, its kubelet Lease and its Longhorn
// Node, Ready or not.
func (w *world) addNode(short string, ready bool) *corev1.Node {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName(short), Labels: w.nodeLabels()}}
	Expect(w.c.Create(w.ctx, node)).To(Succeed())
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: corev1.NamespaceNodeLease, Name: node.Name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node.Name), LeaseDurationSeconds: ptr.To[int32](40)}}
	Expect(w.c.Create(w.ctx, lease)).To(Succeed())
	w.setReady(short, ready)
	w.instanceManagers() // its longhorn-manager starts its instance manager
	return node
}

// killedAgo is how long before setReady(short, false) the kubelet of a
// failing node last renewed its Lease and posted status: long enough that
// the Lease expired, so fencing evidence created by the test counts.
const killedAgo = 2 * time.Minute

// setReady sets the node's Ready condition and Lease, as the kubelet or the
// node-lifecycle controller would, and Longhorn's view of it. A node set not
// Ready had its kubelet die killedAgo: its Lease is expired, and the
// node-lifecycle controller marked it Unknown 50 s later. Ready nodes renew
// their Lease on every simulate().
func (w *world) setReady(short string, ready bool) {
	node := w.node(short)
	now := metav1.NewTime(w.clock.Now())
	status, lhStatus, lhReason := corev1.ConditionTrue, "True", ""
	heartbeat, transition := now, now
	if !ready {
		status, lhStatus, lhReason = corev1.ConditionUnknown, "False", longhorn.NodeReasonKubernetesNodeNotReady
		heartbeat = metav1.NewTime(now.Add(-killedAgo))
		transition = metav1.NewTime(heartbeat.Add(50 * time.Second))
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
		LastHeartbeatTime: heartbeat, LastTransitionTime: transition}}
	Expect(w.c.Status().Update(w.ctx, node)).To(Succeed())
	w.renewLease(short, heartbeat.Time)
	if !ready && w.longhornBlindOn(node.Name) {
		lhReason = "ManagerPodDown"
	}
	w.setLonghornNode(short, lhStatus, lhReason)
}

// longhornBlindOn reports whether a gateway on the node asked Longhorn not
// to report the node down.
func (w *world) longhornBlindOn(node string) bool {
	for _, g := range w.gateways {
		if g.node == node && g.longhornBlind {
			return true
		}
	}
	return false
}

// renewLease sets the node Lease's renewTime, as its kubelet does at at.
// kube-apiserver stamps the write with its own clock, the real one
// (storage.LastWrite), which the fake clock runs ahead of once a story
// steps it: a node set not Ready then has its Unknown transition, on the
// fake clock, more than a Lease duration after that stamp, and the
// control plane's clocks tell its kubelet silent
// (failover.Heartbeat.Silent). A kubelet alive meanwhile renews after the
// transition, by the real clock too.
func (w *world) renewLease(short string, at time.Time) {
	lease := &coordinationv1.Lease{}
	Expect(w.c.Get(w.ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: w.nodeName(short)}, lease)).To(Succeed())
	lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(at))
	Expect(w.c.Update(w.ctx, lease)).To(Succeed())
}

// kubelets renews the Leases of Ready nodes, as live kubelets do.
func (w *world) kubelets() {
	nodes := &corev1.NodeList{}
	Expect(w.c.List(w.ctx, nodes)).To(Succeed())
	for i := range nodes.Items {
		short, ok := strings.CutPrefix(nodes.Items[i].Name, w.id+"-")
		if ok && storage.Heartbeat(&nodes.Items[i], nil).Ready == failover.ReadyTrue {
			w.renewLease(short, w.clock.Now())
		}
	}
}

func (w *world) setLonghornNode(short, status, reason string) {
	lhNode := &longhorn.Node{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName(short), Namespace: longhornNS}}
	err := w.c.Get(w.ctx, client.ObjectKeyFromObject(lhNode), lhNode)
	if client.IgnoreNotFound(err) != nil {
		Expect(err).NotTo(HaveOccurred())
	}
	if err != nil {
		Expect(w.c.Create(w.ctx, lhNode)).To(Succeed())
	}
	lhNode.Status.Conditions = []longhorn.Condition{{Type: longhorn.NodeConditionReady, Status: status, Reason: reason}}
	Expect(w.c.Status().Update(w.ctx, lhNode)).To(Succeed())
}

func (w *world) node(short string) *corev1.Node {
	node := &corev1.Node{}
	Expect(w.c.Get(w.ctx, client.ObjectKey{Name: w.nodeName(short)}, node)).To(Succeed())
	return node
}

func (w *world) taint(short string, taint corev1.Taint) {
	node := w.node(short)
	node.Spec.Taints = append(node.Spec.Taints, taint)
	Expect(w.c.Update(w.ctx, node)).To(Succeed())
}

// untaint removes every taint with the key and effect, whoever added it, and
// leaves the annotations alone: what FAR (pkg/utils/taints.go, RemoveTaint)
// and SNR (internal/utils/taints.go, DeleteTaint) do with the out-of-service
// taint when they finish.
func (w *world) untaint(short string, taint corev1.Taint) {
	node := w.node(short)
	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
	Expect(w.c.Update(w.ctx, node)).To(Succeed())
}

// gateway is one s3gw Deployment with its ReplicaSet, pod and RWO volume.
type gateway struct {
	name, ns   string
	deployment *appsv1.Deployment
	rs         *appsv1.ReplicaSet
	pod        *corev1.Pod // the pod on the failed node
	claim      string
	pv         string // also the Longhorn volume name
	healthy    string // node the replacement is scheduled to
	longhorn   bool   // the volume is a Longhorn CSI volume
	// accessModes are the PV's, which decide Multi-Attach.
	accessModes []corev1.PersistentVolumeAccessMode
	// stuck keeps the replacement from ever becoming Ready (say, its image
	// cannot be pulled).
	stuck bool
	// node is where the gateway's pod runs.
	node string
	// longhornBlind: Longhorn does not report that node down when it fails.
	longhornBlind bool
	// nodeSelector is the pods' spec.nodeSelector.
	nodeSelector map[string]string
}

type gatewayOption func(*gatewayOptions)

type gatewayOptions struct {
	accessMode    corev1.PersistentVolumeAccessMode
	driver        string
	replicaNodes  []string
	labels        map[string]string
	longhornBlind bool
	// revisionCounterDisabled is the Longhorn Volume's (and its
	// replicas') spec.revisionCounterDisabled.
	revisionCounterDisabled bool
	nodeSelector            map[string]string
}

func withAccessMode(m corev1.PersistentVolumeAccessMode) gatewayOption {
	return func(o *gatewayOptions) { o.accessMode = m }
}
func withDriver(d string) gatewayOption { return func(o *gatewayOptions) { o.driver = d } }
func withReplicasOn(nodes ...string) gatewayOption {
	return func(o *gatewayOptions) { o.replicaNodes = nodes }
}
func withLabels(l map[string]string) gatewayOption { return func(o *gatewayOptions) { o.labels = l } }

// withNodeSelector gives the gateway's pods a node selector.
func withNodeSelector(l map[string]string) gatewayOption {
	return func(o *gatewayOptions) { o.nodeSelector = l }
}

// revisionCounterDisabled gives the gateway a Longhorn volume created
// through CSI without disableRevisionCounter: "false" (Longhorn's default).
var revisionCounterDisabled gatewayOption = func(o *gatewayOptions) { o.revisionCounterDisabled = true }

// noStorageIsolation keeps storage isolation from holding without putting
// a replica where Longhorn cannot reach it: Longhorn's manager on the
// gateway's node is down too, so Longhorn reports that node ManagerPodDown,
// which is not "down" for a detach. Stories about other evidence use it.
var noStorageIsolation gatewayOption = func(o *gatewayOptions) { o.longhornBlind = true }

func s3gwLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": "s3gw", "app.kubernetes.io/component": "gateway",
		"app.kubernetes.io/instance": "s3gw"}
}

// addGateway creates an s3gw-like Deployment whose Ready pod runs on node
// `on` with an attached Longhorn RWO volume; its replacement goes to
// `healthy`. By default replicas live on `healthy` only (storage isolated).
func (w *world) addGateway(name, on, healthy string, opts ...gatewayOption) *gateway {
	o := gatewayOptions{accessMode: corev1.ReadWriteOnce, driver: longhorn.CSIDriverName,
		replicaNodes: []string{healthy}, labels: s3gwLabels()}
	for _, opt := range opts {
		opt(&o)
	}
	g := &gateway{name: name, ns: w.ns, claim: name + "-s3gw-pvc", healthy: w.nodeName(healthy),
		node: w.nodeName(on), longhornBlind: o.longhornBlind, nodeSelector: o.nodeSelector}
	g.pv = "pvc-" + w.id + "-" + name

	g.deployment = &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-s3gw", Namespace: w.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: o.labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: o.labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "s3gw", Image: "quay.io/s3gw/s3gw"}}}},
		},
	}
	Expect(w.c.Create(w.ctx, g.deployment)).To(Succeed())
	g.rs = &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-s3gw-5d9f", Namespace: w.ns,
			OwnerReferences: []metav1.OwnerReference{controllerRef(g.deployment, "Deployment")}},
		Spec: appsv1.ReplicaSetSpec{Selector: g.deployment.Spec.Selector, Template: g.deployment.Spec.Template},
	}
	Expect(w.c.Create(w.ctx, g.rs)).To(Succeed())

	w.addVolume(g, o)
	g.pod = w.addPod(g, name+"-s3gw-5d9f-old", w.nodeName(on), o.labels)
	g.longhorn = o.driver == longhorn.CSIDriverName
	g.accessModes = []corev1.PersistentVolumeAccessMode{o.accessMode}
	if g.longhorn {
		w.attach(g, w.nodeName(on))
	}
	w.gateways = append(w.gateways, g)
	return g
}

func controllerRef(obj client.Object, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true)}
}

func (w *world) addVolume(g *gateway, o gatewayOptions) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: g.pv},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{o.accessMode},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: o.driver, VolumeHandle: g.pv}},
			ClaimRef: &corev1.ObjectReference{Namespace: g.ns, Name: g.claim},
		},
	}
	Expect(w.c.Create(w.ctx, pv)).To(Succeed())
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: g.claim, Namespace: g.ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{o.accessMode}, VolumeName: g.pv,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}
	Expect(w.c.Create(w.ctx, pvc)).To(Succeed())
	pvc.Status.Phase = corev1.ClaimBound
	Expect(w.c.Status().Update(w.ctx, pvc)).To(Succeed())
	if o.driver != longhorn.CSIDriverName {
		return
	}
	Expect(w.c.Create(w.ctx, &longhorn.Volume{ObjectMeta: metav1.ObjectMeta{Name: g.pv, Namespace: longhornNS},
		Spec: longhorn.VolumeSpec{RevisionCounterDisabled: o.revisionCounterDisabled}})).To(Succeed())
	Expect(w.c.Create(w.ctx, &longhorn.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: g.pv, Namespace: longhornNS},
		Spec: longhorn.VolumeAttachmentSpec{Volume: g.pv}})).To(Succeed())
	for i, n := range o.replicaNodes {
		Expect(w.c.Create(w.ctx, &longhorn.Replica{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-r-%d", g.pv, i), Namespace: longhornNS,
				Labels: map[string]string{longhorn.VolumeLabel: g.pv}},
			Spec: longhorn.ReplicaSpec{NodeID: w.nodeName(n), VolumeName: g.pv, HealthyAt: "2026-11-30T00:00:00Z",
				RevisionCounterDisabled: o.revisionCounterDisabled},
		})).To(Succeed())
	}
}

// failReplicas marks every Longhorn replica of the gateway's volume failed,
// as longhorn-manager does when it loses one.
func (w *world) failReplicas(g *gateway) {
	replicas := &longhorn.ReplicaList{}
	Expect(w.c.List(w.ctx, replicas, client.InNamespace(longhornNS), client.MatchingLabels{longhorn.VolumeLabel: g.pv})).To(Succeed())
	Expect(replicas.Items).NotTo(BeEmpty())
	for i := range replicas.Items {
		r := &replicas.Items[i]
		r.Spec.FailedAt = w.clock.Now().UTC().Format(time.RFC3339)
		Expect(w.c.Update(w.ctx, r)).To(Succeed())
	}
}

func (w *world) addPod(g *gateway, name, node string, labels map[string]string) *corev1.Pod {
	pod := w.addPendingPod(g, name, node, labels)
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	Expect(w.c.Status().Update(w.ctx, pod)).To(Succeed())
	return pod
}

// addPendingPod creates a gateway pod scheduled to node, not yet Ready.
func (w *world) addPendingPod(g *gateway, name, node string, labels map[string]string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: g.ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{controllerRef(g.rs, "ReplicaSet")}},
		Spec: corev1.PodSpec{NodeName: node, NodeSelector: g.nodeSelector, Containers: []corev1.Container{{Name: "s3gw", Image: "quay.io/s3gw/s3gw"}},
			Volumes: []corev1.Volume{{Name: "s3gw-lh-store", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: g.claim}}}}},
	}
	Expect(w.c.Create(w.ctx, pod)).To(Succeed())
	return pod
}

// attach plays the attach-detach controller, the external-attacher and
// kubelet for an attach: a VolumeAttachment, Longhorn's ticket, and the
// volume in the node's volumesInUse (attachrules has the rules).
func (w *world) attach(g *gateway, node string) {
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: attachrules.AttachmentName(g.pv, node)},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: longhorn.CSIDriverName, NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(g.pv)}},
	}
	Expect(w.c.Create(w.ctx, va)).To(Succeed())
	va.Status.Attached = true
	Expect(w.c.Status().Update(w.ctx, va)).To(Succeed())

	lhva := &longhorn.VolumeAttachment{}
	Expect(w.c.Get(w.ctx, client.ObjectKey{Namespace: longhornNS, Name: g.pv}, lhva)).To(Succeed())
	if lhva.Spec.AttachmentTickets == nil {
		lhva.Spec.AttachmentTickets = map[string]*longhorn.AttachmentTicket{}
	}
	lhva.Spec.AttachmentTickets[va.Name] = attachrules.PublishTicket(va.Name, node)
	Expect(w.c.Update(w.ctx, lhva)).To(Succeed())

	n := &corev1.Node{}
	Expect(w.c.Get(w.ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
	n.Status.VolumesInUse = append(n.Status.VolumesInUse, longhorn.UniqueVolumeName(g.pv))
	Expect(w.c.Status().Update(w.ctx, n)).To(Succeed())
}

// attachments lists the gateway's VolumeAttachments on a node.
func (w *world) attachments(g *gateway, node string) []storagev1.VolumeAttachment {
	vas, err := attachments.VolumeAttachments(w.ctx, w.c, g.pv, node)
	Expect(err).NotTo(HaveOccurred())
	return vas
}

func (w *world) tickets(g *gateway) map[string]*longhorn.AttachmentTicket {
	lhva := &longhorn.VolumeAttachment{}
	Expect(w.c.Get(w.ctx, client.ObjectKey{Namespace: longhornNS, Name: g.pv}, lhva)).To(Succeed())
	return lhva.Spec.AttachmentTickets
}

func (w *world) podExists(pod *corev1.Pod) bool {
	got := &corev1.Pod{}
	err := w.c.Get(w.ctx, client.ObjectKeyFromObject(pod), got)
	if client.IgnoreNotFound(err) != nil {
		Expect(err).NotTo(HaveOccurred())
	}
	return err == nil && got.UID == pod.UID
}

// simulate runs the test doubles once, in the order the real components
// react: attach-detach controller, external-attacher, ReplicaSet
// controller with scheduler and kubelet; live kubelets renew their Lease.
func (w *world) simulate() {
	w.kubelets()
	w.attachDetachController()
	w.externalAttacher()
	w.instanceManagers()
	w.replicaSetController()
}

// instanceManagers plays each node's longhorn-manager keeping its instance
// manager's CR (longhorn-manager controller/instance_manager_controller.go):
// InstanceManagerMonitor lists the replica processes running on its node,
// here those of every volume some ticket wants attached (any ticket
// attaches a volume, volume_attachment_controller.go); syncStatusWithNode
// turns the CR unknown, keeping its list, on a node Longhorn counts down;
// a manager cut off from the API server (cutOff) writes nothing.
func (w *world) instanceManagers() {
	nodes := &corev1.NodeList{}
	Expect(w.c.List(w.ctx, nodes, client.MatchingLabels(w.nodeLabels()))).To(Succeed())
	for _, n := range nodes.Items {
		if w.cutOff[n.Name] {
			continue
		}
		im := &longhorn.InstanceManager{ObjectMeta: metav1.ObjectMeta{Namespace: longhornNS, Name: "instance-manager-" + n.Name}}
		err := w.c.Get(w.ctx, client.ObjectKeyFromObject(im), im)
		if apierrors.IsNotFound(err) {
			im.Spec.NodeID = n.Name
			im.Labels = map[string]string{longhorn.InstanceManagerNodeLabel: n.Name} // as longhorn-manager does
			Expect(w.c.Create(w.ctx, im)).To(Succeed())
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		want := im.Status.DeepCopy()
		lhNode := &longhorn.Node{}
		Expect(w.c.Get(w.ctx, client.ObjectKey{Namespace: longhornNS, Name: n.Name}, lhNode)).To(Succeed())
		if len(lhNode.Status.Conditions) > 0 && lhNode.Status.Conditions[0].Reason == longhorn.NodeReasonKubernetesNodeNotReady {
			want.CurrentState = longhorn.InstanceManagerUnknown
		} else {
			want.CurrentState, want.InstanceReplicas = longhorn.InstanceManagerRunning, w.runningReplicasOn(n.Name)
		}
		if !equality.Semantic.DeepEqual(want, &im.Status) {
			im.Status = *want
			Expect(w.c.Status().Update(w.ctx, im)).To(Succeed())
		}
	}
}

// setInstanceManagerState sets the state of the instance manager on node
// short, as its longhorn-manager does while the pod restarts
// (syncInstanceStatus: starting, its list blanked).
func (w *world) setInstanceManagerState(short, state string) {
	im := &longhorn.InstanceManager{}
	Expect(w.c.Get(w.ctx, client.ObjectKey{Namespace: longhornNS, Name: "instance-manager-" + w.nodeName(short)}, im)).To(Succeed())
	im.Status.CurrentState = state
	if state != longhorn.InstanceManagerRunning {
		im.Status.InstanceReplicas = nil
	}
	Expect(w.c.Status().Update(w.ctx, im)).To(Succeed())
}

// runningReplicasOn lists the replicas on node of the gateways' volumes
// Longhorn attaches.
func (w *world) runningReplicasOn(node string) map[string]longhorn.InstanceProcess {
	var running map[string]longhorn.InstanceProcess
	for _, g := range w.gateways {
		if !g.longhorn || len(w.tickets(g)) == 0 {
			continue
		}
		replicas := &longhorn.ReplicaList{}
		Expect(w.c.List(w.ctx, replicas, client.InNamespace(longhornNS), client.MatchingLabels{longhorn.VolumeLabel: g.pv})).To(Succeed())
		for _, r := range replicas.Items {
			if r.Spec.NodeID == node {
				if running == nil {
					running = map[string]longhorn.InstanceProcess{}
				}
				running[r.Name] = longhorn.InstanceProcess{Status: longhorn.InstanceProcessStatus{State: "running"}}
			}
		}
	}
	return running
}

// attachDetachController detaches a volume from a node when
// attachrules.ADCDetaches says the attach-detach controller would (the
// local-cluster e2e tests run the real one).
func (w *world) attachDetachController() {
	vas := &storagev1.VolumeAttachmentList{}
	Expect(w.c.List(w.ctx, vas)).To(Succeed())
	for i := range vas.Items {
		va := &vas.Items[i]
		if !strings.HasPrefix(va.Spec.NodeName, w.id+"-") || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		node := &corev1.Node{}
		Expect(w.c.Get(w.ctx, client.ObjectKey{Name: va.Spec.NodeName}, node)).To(Succeed())
		handle := *va.Spec.Source.PersistentVolumeName
		if attachrules.ADCDetaches(node, handle, w.podUsesVolumeOn(handle, node.Name)) {
			Expect(client.IgnoreNotFound(w.c.Delete(w.ctx, va))).To(Succeed())
		}
	}
}

func (w *world) podUsesVolumeOn(pv, node string) bool {
	for _, g := range w.gateways {
		if g.pv != pv {
			continue
		}
		pods := &corev1.PodList{}
		Expect(w.c.List(w.ctx, pods, client.InNamespace(g.ns))).To(Succeed())
		for _, p := range pods.Items {
			if p.Spec.NodeName != node {
				continue
			}
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == g.claim {
					return true
				}
			}
		}
	}
	return false
}

// externalAttacher removes Longhorn's CSI ticket once its Kubernetes
// VolumeAttachment is gone (ControllerUnpublishVolume), and only the
// tickets attachrules.TicketAttachment says the attacher owns.
func (w *world) externalAttacher() {
	for _, g := range w.gateways {
		lhva := &longhorn.VolumeAttachment{}
		if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: longhornNS, Name: g.pv}, lhva); err != nil {
			continue // not a Longhorn volume
		}
		changed := false
		for id, ticket := range lhva.Spec.AttachmentTickets {
			name, ok := attachrules.TicketAttachment(ticket)
			if !ok {
				continue // other requesters (Longhorn's UI, backups) own theirs
			}
			va := &storagev1.VolumeAttachment{}
			if err := w.c.Get(w.ctx, client.ObjectKey{Name: name}, va); client.IgnoreNotFound(err) == nil && err != nil {
				delete(lhva.Spec.AttachmentTickets, id)
				changed = true
			}
		}
		if changed {
			Expect(w.c.Update(w.ctx, lhva)).To(Succeed())
		}
	}
}

// replicaSetController replaces a gateway pod that is gone from the API with
// a pod on the healthy node at once, as the ReplicaSet controller and the
// scheduler do; that pod becomes Ready only once the volume attaches there:
// no Multi-Attach, and Longhorn's CSI plugin does not refuse.
func (w *world) replicaSetController() {
	for _, g := range w.gateways {
		pods := &corev1.PodList{}
		Expect(w.c.List(w.ctx, pods, client.InNamespace(g.ns))).To(Succeed())
		var owned []corev1.Pod
		for _, p := range pods.Items {
			if metav1.IsControlledBy(&p, g.rs) {
				owned = append(owned, p)
			}
		}
		if len(owned) == 0 {
			w.addPendingPod(g, g.name+"-s3gw-5d9f-new", g.healthy, g.pod.Labels)
			continue
		}
		replacement := owned[0]
		if g.stuck || replacement.Spec.NodeName != g.healthy || workloads.PodReady(&replacement) ||
			attachrules.MultiAttach(g.accessModes, w.attachedTo(g), g.healthy) {
			continue
		}
		if g.longhorn {
			if w.publishRefusal(g, g.healthy) != "" {
				continue
			}
			w.attach(g, g.healthy)
		}
		replacement.Status.Phase = corev1.PodRunning
		replacement.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		Expect(w.c.Status().Update(w.ctx, &replacement)).To(Succeed())
	}
}

// attachedTo lists the nodes the gateway's volume has a VolumeAttachment on.
func (w *world) attachedTo(g *gateway) []string {
	vas := &storagev1.VolumeAttachmentList{}
	Expect(w.c.List(w.ctx, vas)).To(Succeed())
	var nodes []string
	for _, va := range vas.Items {
		if va.Spec.Source.PersistentVolumeName != nil && *va.Spec.Source.PersistentVolumeName == g.pv {
			nodes = append(nodes, va.Spec.NodeName)
		}
	}
	return nodes
}

// publishRefusal is why Longhorn's CSI plugin would not attach the
// gateway's volume to node now ("" if it would), from the Longhorn Node and
// Volume as they are.
func (w *world) publishRefusal(g *gateway, node string) string {
	target := &longhorn.Node{}
	err := w.c.Get(w.ctx, client.ObjectKey{Namespace: longhornNS, Name: node}, target)
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	if err != nil {
		target = nil // no Longhorn Node there
	}
	vol := &longhorn.Volume{}
	Expect(w.c.Get(w.ctx, client.ObjectKey{Namespace: longhornNS, Name: g.pv}, vol)).To(Succeed())
	return attachrules.PublishRefusal(target, vol, node)
}

// template creates an S3GWRemediationTemplate in the scenario namespace.
func (w *world) template(name string, spec s3gwv1alpha1.S3GWRemediationSpec, multi bool) *s3gwv1alpha1.S3GWRemediationTemplate {
	t := &s3gwv1alpha1.S3GWRemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: s3gwv1alpha1.S3GWRemediationTemplateSpec{Template: s3gwv1alpha1.S3GWRemediationTemplateResource{Spec: spec}}}
	if multi {
		t.Annotations = map[string]string{"remediation.medik8s.io/multiple-templates-support": "true"}
	}
	Expect(w.c.Create(w.ctx, t)).To(Succeed())
	return t
}

// nhc returns an NHC emulator for the template, with its NodeHealthCheck.
func (w *world) nhc(t *s3gwv1alpha1.S3GWRemediationTemplate) *nhc.Emulator {
	return w.nodeHealthCheck(t.Name, func(e *nhc.Emulator) { e.Template = templateRef(t) })
}

func templateRef(t *s3gwv1alpha1.S3GWRemediationTemplate) nhc.TemplateRef {
	return nhc.TemplateRef{APIVersion: s3gwv1alpha1.GroupVersion.String(), Kind: "S3GWRemediationTemplate",
		Namespace: t.Namespace, Name: t.Name}
}

// nodeHealthCheck creates a NodeHealthCheck over the scenario's nodes, set
// up by spec, admitted by NHC's webhook rules against the scenario's own
// templates (each scenario is a cluster of its own).
func (w *world) nodeHealthCheck(name string, spec func(*nhc.Emulator)) *nhc.Emulator {
	e := &nhc.Emulator{Client: nhcClient, Name: "nhc-" + w.id + "-" + name, Clock: w.clock,
		Selector:  metav1.LabelSelector{MatchLabels: w.nodeLabels()},
		Templates: nhc.NamespacedReader(k8sClient, w.ns)}
	spec(e)
	Expect(e.CreateNodeHealthCheck(w.ctx, k8sClient)).To(Succeed())
	return e
}

// remediate has NHC create the CR for the node and returns its key. The
// controller is taken to have watched the node since before it failed: its
// sighting of the node's last heartbeat, made when it happened, is in
// status (sawHeartbeat), so stories need not step the clock a Lease
// duration before the gate can trust the node silent.
func (w *world) remediate(e *nhc.Emulator, short string) types.NamespacedName {
	cr, err := e.Remediate(w.ctx, w.node(short))
	Expect(err).NotTo(HaveOccurred())
	Expect(cr).NotTo(BeNil())
	key := client.ObjectKeyFromObject(cr)
	w.sawHeartbeat(key, short)
	return key
}

// sawHeartbeat records in the CR's status that the controller read the
// node's current heartbeat values when the kubelet wrote them (the node's
// Ready lastHeartbeatTime), as a controller that watched the node does. A
// manager running beside the story may write status meanwhile: the record
// is retried on the CR it wrote.
func (w *world) sawHeartbeat(key types.NamespacedName, short string) {
	w.recordHeartbeat(key, short, func(hb failover.Heartbeat) time.Time { return hb.KubeletPosted })
}

// firstSawHeartbeat records in the CR's status the sighting of a controller
// that first read the node's heartbeat now, on its own clock: one that
// never watched the node before it failed.
func (w *world) firstSawHeartbeat(key types.NamespacedName, short string) {
	w.recordHeartbeat(key, short, func(failover.Heartbeat) time.Time { return w.clock.Now() })
}

// recordHeartbeat records the node's current heartbeat values in the CR's
// status as read at seenAt(them).
func (w *world) recordHeartbeat(key types.NamespacedName, short string, seenAt func(failover.Heartbeat) time.Time) {
	lease := &coordinationv1.Lease{}
	Expect(w.c.Get(w.ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: w.nodeName(short)}, lease)).To(Succeed())
	hb := storage.Heartbeat(w.node(short), lease)
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rem := w.remediation(key)
		rem.Status.Memory.Heartbeat = &s3gwv1alpha1.HeartbeatSighting{LeaseRenewTime: lease.Spec.RenewTime,
			KubeletPostedAt: ptr.To(metav1.NewTime(hb.KubeletPosted)), SeenAt: metav1.NewMicroTime(seenAt(hb))}
		return w.c.Status().Update(w.ctx, rem)
	})).To(Succeed())
}

// watchedSinceFailure gives a CR NHC created for a failed node, before the
// controller's first pass on it, the sighting of a controller that watched
// the node since before it failed (sawHeartbeat), as remediate does.
func (w *world) watchedSinceFailure(key types.NamespacedName) {
	rem := &s3gwv1alpha1.S3GWRemediation{}
	if w.c.Get(w.ctx, key, rem) != nil || rem.Status.Memory.Heartbeat != nil {
		return
	}
	short, ok := strings.CutPrefix(medik8s.NodeName(rem), w.id+"-")
	node := &corev1.Node{}
	if !ok || w.c.Get(w.ctx, client.ObjectKey{Name: medik8s.NodeName(rem)}, node) != nil ||
		storage.Heartbeat(node, nil).Ready == failover.ReadyTrue {
		return // no such node, or it is Ready
	}
	w.sawHeartbeat(key, short)
}

func (w *world) remediation(key types.NamespacedName) *s3gwv1alpha1.S3GWRemediation {
	rem := &s3gwv1alpha1.S3GWRemediation{}
	Expect(w.c.Get(w.ctx, key, rem)).To(Succeed())
	return rem
}

func (w *world) asUnstructured(key types.NamespacedName) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s3gwv1alpha1.GroupVersion.WithKind("S3GWRemediation"))
	Expect(w.c.Get(w.ctx, key, u)).To(Succeed())
	return u
}

// stepper drives a reconciler pass by pass, the world's doubles reacting
// between passes, so stories are deterministic. Stories give it
// managerClient, so every story also proves the generated RBAC suffices.
type stepper struct {
	w        *world
	r        *RemediationReconciler
	recorder *record.FakeRecorder
	events   []string
	registry *prometheus.Registry
}

func (w *world) stepper(c client.Client) *stepper {
	recorder := record.NewFakeRecorder(1000)
	registry := prometheus.NewRegistry()
	r := NewRemediationReconciler(c, c, recorder, w.clock, metrics.New(registry))
	return &stepper{w: w, r: r, recorder: recorder, registry: registry}
}

// pass runs one reconcile and lets the world react; it returns the error.
func (s *stepper) pass(key types.NamespacedName) error {
	s.w.watchedSinceFailure(key)
	_, err := s.r.Reconcile(s.w.ctx, reconcile.Request{NamespacedName: key})
	s.drainEvents()
	s.w.simulate()
	return err
}

// until runs passes until done holds (at most max), failing otherwise.
func (s *stepper) until(key types.NamespacedName, max int, done func(*s3gwv1alpha1.S3GWRemediation) bool) int {
	for i := 1; i <= max; i++ {
		Expect(s.pass(key)).To(Succeed())
		if done(s.w.remediation(key)) {
			return i
		}
	}
	Fail(fmt.Sprintf("remediation %s did not converge in %d passes: %+v", key, max, s.w.remediation(key).Status))
	return max
}

func (s *stepper) drainEvents() {
	for {
		select {
		case e := <-s.recorder.Events:
			s.events = append(s.events, e)
		default:
			return
		}
	}
}

// metric returns the value of a counter or gauge with the given labels
// (all of them, in any order), or 0 when it was never set.
func (s *stepper) metric(name string, labels map[string]string) float64 {
	families, err := s.registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	samples:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue samples
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

// eventsWithReason returns the recorded events of a reason.
func (s *stepper) eventsWithReason(reason string) []string {
	var out []string
	for _, e := range s.events {
		if strings.Contains(e, " "+reason+" ") {
			out = append(out, e)
		}
	}
	return out
}

// addFAR creates a FenceAgentsRemediation for the node (named after it, as
// NHC would) and sets the given condition.
func (w *world) addFAR(short, conditionType string, status metav1.ConditionStatus) *unstructured.Unstructured {
	far := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"agent": "fence_ipmilan"}}}
	far.SetAPIVersion("fence-agents-remediation.medik8s.io/v1alpha1")
	far.SetKind("FenceAgentsRemediation")
	far.SetNamespace(w.ns)
	far.SetName(w.nodeName(short))
	Expect(w.c.Create(w.ctx, far)).To(Succeed())
	w.setCondition(far, conditionType, status)
	return far
}

// setCondition sets one status condition on an unstructured CR, now.
func (w *world) setCondition(obj *unstructured.Unstructured, conditionType string, status metav1.ConditionStatus) {
	w.setConditionAt(obj, conditionType, status, w.clock.Now())
}

// setConditionAt sets one status condition with the given lastTransitionTime.
func (w *world) setConditionAt(obj *unstructured.Unstructured, conditionType string, status metav1.ConditionStatus, at time.Time) {
	Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	Expect(unstructured.SetNestedSlice(obj.Object, []any{map[string]any{
		"type": conditionType, "status": string(status), "reason": "Test", "message": "set by the test",
		"lastTransitionTime": at.UTC().Format(time.RFC3339),
	}}, "status", "conditions")).To(Succeed())
	Expect(w.c.Status().Update(w.ctx, obj)).To(Succeed())
}

// delegateSpec creates a FenceAgentsRemediationTemplate "far" (with the
// multiple-templates annotation if multi) and returns a spec that fences
// through it alone.
func (w *world) delegateSpec(multi bool) s3gwv1alpha1.S3GWRemediationSpec {
	far := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"agent": "fence_ipmilan", "remediationStrategy": "ResourceDeletion"}}}}}
	far.SetAPIVersion("fence-agents-remediation.medik8s.io/v1alpha1")
	far.SetKind("FenceAgentsRemediationTemplate")
	far.SetNamespace(w.fencerNamespace())
	far.SetName("far")
	if multi {
		far.SetAnnotations(map[string]string{"remediation.medik8s.io/multiple-templates-support": "true"})
	}
	Expect(w.c.Create(w.ctx, far)).To(Succeed())
	return s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
		OutOfServiceTaint: ptr.To(false), StorageIsolation: ptr.To(false),
		Delegate: &s3gwv1alpha1.DelegateFencing{APIVersion: "fence-agents-remediation.medik8s.io/v1alpha1",
			Kind: "FenceAgentsRemediationTemplate", Name: "far", Namespace: w.fencerNamespace(),
			ConditionType: "FenceAgentActionSucceeded"},
	}}
}

// fencerNamespace is the scenario's fencer namespace, where FAR's templates
// live as FAR's users keep them (next to FAR and its Secrets), apart from
// the S3GWRemediationTemplate's.
func (w *world) fencerNamespace() string {
	ns := "fencer-" + w.id
	err := w.c.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	return ns
}

func farEvidence() []s3gwv1alpha1.RemediatorEvidence {
	return []s3gwv1alpha1.RemediatorEvidence{{APIVersion: "fence-agents-remediation.medik8s.io/v1alpha1",
		Kind: "FenceAgentsRemediation", ConditionType: "FenceAgentActionSucceeded"}}
}

// longhornSeesDown has Longhorn report the node down, as it does once its
// manager there is replaced and Kubernetes reports the node NotReady.
func (w *world) longhornSeesDown(short string) {
	w.setLonghornNode(short, "False", longhorn.NodeReasonKubernetesNodeNotReady)
}
