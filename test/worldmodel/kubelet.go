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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// The kubelet acts only while its node is powered, the process runs and it
// reaches the API server. It renews its Lease every 10 s, computes node
// status every 10 s (posting on change or every 5 min), and runs, kills and
// finally deletes the pods bound to it.
const (
	// kubeletManager is the field manager kube-apiserver names the
	// kubelet's writes by (its user agent's product).
	kubeletManager            = "kubelet"
	leaseRenewInterval        = 10
	nodeStatusUpdateFrequency = 10
	nodeStatusReportFrequency = 5 * time.Minute
	// podStatusSyncPeriod is the status manager's syncPeriod
	// (k8s.io/kubernetes pkg/kubelet/status/status_manager.go): every
	// 10 s syncBatch re-posts each pod whose status in the API differs
	// from the kubelet's own (needsReconcile).
	podStatusSyncPeriod = 10
)

func (w *World) kubelets() {
	for _, n := range w.nodes {
		if !n.Powered || !n.KubeletUp || !n.CP {
			continue
		}
		if !n.synced {
			n.synced = true
			w.tracef("kubelet", "%s resynced with the API", n.Name)
			w.registerNode(n)
		}
		w.renewLease(n)
		w.syncPods(n)
		w.reconcilePodStatuses(n)
		w.syncNodeStatus(n)
		if n.managerPodReady != n.ManagerUp {
			n.managerPodReady = n.ManagerUp // the pod's status; watched by Longhorn's node controller
			w.api.reactive++
		}
	}
}

// renewLease renews the node's Lease, or creates it when there is none:
// only once its Node exists, whose UID the kubelet puts in the owner
// reference (component-helpers apimachinery/lease/controller.go,
// ensureLease: no create when newLeasePostProcessFunc fails, as
// pkg/kubelet/util/nodelease.go SetNodeOwnerFunc does on a missing Node).
// A renewal needs no Node: the old Lease is renewed until the garbage
// collector deletes it.
func (w *World) renewLease(n *Node) {
	now := w.unix()
	if now < n.nextLease {
		w.wakeAt(w.at(n.nextLease))
		return
	}
	n.nextLease = now + leaseRenewInterval
	t := apiMicroTime(w.nodeClock(n))
	lease := w.api.lease(n.Name)
	if lease == nil {
		if node := w.api.node(n.Name); node != nil {
			lease = newNodeLease(node, t)
			w.api.stampWrite(lease, kubeletManager)
			w.api.create(lease)
			w.tracef("kubelet", "%s created its Lease", n.Name)
		}
		return
	}
	if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.Equal(&t) {
		w.api.stampWrite(lease, kubeletManager)
	}
	lease.Spec.RenewTime = &t
	w.api.touch(lease)
}

// syncPods kills containers of pods gone from the API or terminating
// (runtime permitting), completes terminating pods once their container is
// gone, and starts containers of bound pods whose volume is in use and
// attached here.
func (w *World) syncPods(n *Node) {
	var bound []*corev1.Pod
	for _, p := range w.api.pods() {
		if p.Spec.NodeName == n.Name {
			bound = append(bound, p)
		}
	}
	if n.RuntimeUp {
		w.killOrphans(n)
	}
	n.mounts = w.desiredMounts(n, bound)
	for _, p := range bound {
		switch {
		case podTerminating(p):
			if n.container(p.UID) == nil {
				w.tracef("kubelet", "%s: pod %s terminated, deleting it", n.Name, p.Name)
				deletePod(w.api, p, new(int64))
			}
		case n.container(p.UID) == nil && n.RuntimeUp:
			w.startContainer(n, p)
		}
	}
}

func (w *World) killOrphans(n *Node) {
	kept := n.containers[:0]
	for _, c := range n.containers {
		p := w.api.podByUID(c.PodUID)
		if p != nil && !podTerminating(p) && p.Spec.NodeName == n.Name {
			kept = append(kept, c)
			continue
		}
		w.tracef("kubelet", "%s: killed the s3gw container of %s", n.Name, c.Vol.Name)
	}
	n.containers = kept
}

// desiredMounts is the volume manager's in-use set: volumes of live pods
// bound here (before they mount) and of containers still running.
func (w *World) desiredMounts(n *Node, bound []*corev1.Pod) []string {
	var mounts []string
	for _, p := range bound {
		if !podTerminating(p) {
			if v := w.volumeOfClaim(claimOf(p)); v != nil {
				mounts = append(mounts, v.Name)
			}
		}
	}
	for _, c := range n.containers {
		mounts = append(mounts, c.Vol.Name)
	}
	slices.Sort(mounts)
	return slices.Compact(mounts)
}

// startContainer mounts and starts s3gw once the volume is reported in use,
// attached to this node, and Longhorn's engine runs here. Without a Node
// the volume manager cannot confirm the attachment, and nothing mounts.
func (w *World) startContainer(n *Node, p *corev1.Pod) {
	v, node := w.volumeOfClaim(claimOf(p)), w.api.node(n.Name)
	if v == nil || node == nil || !slices.Contains(node.Status.VolumesInUse, longhorn.UniqueVolumeName(v.Name)) {
		return
	}
	va := w.api.kubeAttachment(attachmentName(v.Name, n.Name))
	if va == nil || !va.Status.Attached || v.current == nil || v.current.Node != n || !v.current.Running {
		return
	}
	n.containers = append(n.containers, &Container{PodUID: p.UID, Vol: v, Engine: v.current})
	setPodRunning(p, w.nodeClock(n))
	w.api.touch(p)
	w.tracef("kubelet", "%s: started s3gw (pod %s) on engine e%d", n.Name, p.Name, v.current.Seq)
	w.stats.started(v, n)
}

// reconcilePodStatuses is the status manager's syncBatch: a pod whose
// container runs here and whose Ready condition the node lifecycle
// controller set False while the node was unreachable (MarkPodsNotReady,
// pkg/controller/util/node/controller_utils.go: the PodReady condition
// only, never containerStatuses[].ready) differs from the kubelet's status
// (needsReconcile), which is re-posted: Ready again within 10 s of the
// kubelet reaching the API server.
func (w *World) reconcilePodStatuses(n *Node) {
	now := w.unix()
	if now < n.nextPodStatus {
		w.wakeAt(w.at(n.nextPodStatus))
		return
	}
	n.nextPodStatus = now + podStatusSyncPeriod
	for _, c := range n.containers {
		p := w.api.podByUID(c.PodUID)
		if p == nil || podTerminating(p) {
			continue
		}
		for i := range p.Status.Conditions {
			if cond := &p.Status.Conditions[i]; cond.Type == corev1.PodReady && cond.Status != corev1.ConditionTrue {
				cond.Status, cond.LastTransitionTime = corev1.ConditionTrue, apiTime(w.nodeClock(n))
				w.api.touch(p)
				w.tracef("kubelet", "%s: pod %s Ready again", n.Name, p.Name)
			}
		}
	}
}

// syncNodeStatus computes Ready and volumesInUse every 10 s and posts
// them when they differ from the API's or the report is 5 minutes old,
// with its own clock's times (kubelet setNodeReadyCondition). It patches
// the Node by name (kubelet_node_status.go, tryUpdateNodeStatus): a
// deleted Node fails with NotFound and is not re-created; a Node
// re-created under the name takes the patch, its first Ready condition.
func (w *World) syncNodeStatus(n *Node) {
	now := w.unix()
	if now < n.nextStatus {
		w.wakeAt(w.at(n.nextStatus))
		return
	}
	n.nextStatus = now + nodeStatusUpdateFrequency
	node := w.api.node(n.Name)
	if node == nil {
		return
	}
	status, reason := corev1.ConditionTrue, "KubeletReady"
	if !n.RuntimeUp {
		status, reason = corev1.ConditionFalse, "KubeletNotReady"
	}
	inUse := make([]corev1.UniqueVolumeName, 0, len(n.mounts))
	for _, m := range n.mounts {
		inUse = append(inUse, longhorn.UniqueVolumeName(m))
	}
	ready := readyCondition(node)
	if ready == nil {
		node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady})
		ready = readyCondition(node)
	}
	kubeletNow := w.nodeClock(n)
	if ready.Status == status && slices.Equal(node.Status.VolumesInUse, inUse) &&
		kubeletNow.Sub(ready.LastHeartbeatTime.Time) < nodeStatusReportFrequency {
		return
	}
	if ready.Status != status {
		ready.LastTransitionTime = apiTime(kubeletNow)
		w.tracef("kubelet", "%s posts Ready=%s", n.Name, status)
	}
	ready.Status, ready.Reason, ready.Message = status, reason, ""
	ready.LastHeartbeatTime = apiTime(kubeletNow)
	node.Status.VolumesInUse = inUse
	w.api.touch(node)
}

// registerNode is the kubelet's registration at its first contact after
// boot (kubelet_node_status.go, registerWithAPIServer, once per process:
// registrationCompleted): it creates its Node when there is none. A
// kubelet that keeps running never does, whatever happens to the Node.
func (w *World) registerNode(n *Node) {
	if w.api.node(n.Name) != nil {
		return
	}
	w.api.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name,
		Labels: map[string]string{corev1.LabelHostname: n.Name}}})
	w.tracef("kubelet", "%s registered its Node", n.Name)
}
