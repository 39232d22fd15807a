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
	"fmt"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// This file builds the steady state an episode starts from: every node
// Ready, each s3gw pod running on its node with its volume attached there.

const (
	externalAttacherFinalizer = "external-attacher/driver-longhorn-io"
	longhornFinalizer         = "longhorn.io"
)

// gatewayLabels are the chart's selector labels on the gateway pods.
func gatewayLabels(release string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "s3gw",
		"app.kubernetes.io/instance":  release,
		"app.kubernetes.io/component": "gateway",
	}
}

func (w *World) buildNodes() {
	long := apiTime(w.now.Add(-time.Hour))
	for i := range w.sc.Nodes {
		n := &Node{Name: fmt.Sprintf("n%d", i+1), Powered: true, KubeletUp: true, RuntimeUp: true, ManagerUp: true,
			managerPodReady: true, CP: true, synced: true, Skew: w.sc.Clocks.Nodes[i]}
		w.nodes = append(w.nodes, n)
		kubeletNow := w.nodeClock(n)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{corev1.LabelHostname: n.Name}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: apiTime(kubeletNow), LastTransitionTime: apiTime(kubeletNow.Add(-time.Hour)),
			}}},
		}
		w.api.create(node)
		lease := newNodeLease(node, apiMicroTime(kubeletNow))
		w.api.stampWrite(lease, kubeletManager)
		w.api.create(lease)
		w.api.create(&longhorn.Node{
			ObjectMeta: metav1.ObjectMeta{Namespace: longhornNamespace, Name: n.Name},
			Status: longhorn.NodeStatus{Conditions: []longhorn.Condition{{
				Type: longhorn.NodeConditionReady, Status: statusTrue, LastTransitionTime: long}}},
		})
	}
}

// buildInstance creates one s3gw release: Deployment, ReplicaSet, its
// running pod, the PVC/PV, both attachment records, and Longhorn's volume,
// engine and replicas with their processes.
func (w *World) buildInstance(i int, spec InstanceSpec) {
	node := w.nodes[spec.Node]
	v := &Volume{Index: i, Name: fmt.Sprintf("pvc-%08x-5e1f-4d2a-9c3b-%012x", i+1, i+1),
		RevisionCounterDisabled: spec.RevisionCounterDisabled}
	w.volumes = append(w.volumes, v)
	release := fmt.Sprintf("gw%d", i)
	rs := w.buildWorkload(release)
	pod := w.newGatewayPod(rs, release)
	pod.Spec.NodeName = node.Name
	setPodRunning(pod, w.now)
	w.api.create(pod)
	w.buildClaim(release, v.Name)
	w.buildLonghornVolume(v, spec, node)

	node.mounts = append(node.mounts, v.Name)
	node.containers = append(node.containers, &Container{PodUID: pod.UID, Vol: v, Engine: v.current})
	w.adc.actual = append(w.adc.actual, attachKey{pv: v.Name, node: node.Name})
	n := w.api.node(node.Name)
	n.Status.VolumesInUse = append(n.Status.VolumesInUse, longhorn.UniqueVolumeName(v.Name))
	w.api.touch(n)
}

func (w *World) buildWorkload(release string) *appsv1.ReplicaSet {
	name := release + "-s3gw"
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: gatewayNamespace, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: gatewayLabels(release)}},
	}
	w.api.create(dep)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: gatewayNamespace, Name: name + "-5d8f7c9b4", Labels: gatewayLabels(release),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name,
				UID: dep.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: gatewayLabels(release)}},
	}
	w.api.create(rs)
	return rs
}

// newGatewayPod is the chart's gateway pod as admission leaves it: the
// default 300 s not-ready/unreachable tolerations and a 30 s grace period,
// plus the scenario's foreign finalizer.
func (w *World) newGatewayPod(rs *appsv1.ReplicaSet, release string) *corev1.Pod {
	pod := gatewayPod(rs, w.suffix(), release)
	if w.sc.PodFinalizer > 0 {
		pod.Finalizers = []string{foreignFinalizer}
	}
	return pod
}

func gatewayPod(rs *appsv1.ReplicaSet, suffix, release string) *corev1.Pod {
	tolerate := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
			TolerationSeconds: ptr.To(int64(300))}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, Name: rs.Name + "-" + suffix, Labels: gatewayLabels(release),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name,
				UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: release, Image: "quay.io/s3gw/s3gw:latest"}},
			Volumes: []corev1.Volume{{Name: claimVolumeName, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: release + "-s3gw-pvc"}}}},
			Tolerations:                   []corev1.Toleration{tolerate(corev1.TaintNodeNotReady), tolerate(corev1.TaintNodeUnreachable)},
			TerminationGracePeriodSeconds: ptr.To(int64(corev1.DefaultTerminationGracePeriodSeconds)),
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func setPodRunning(p *corev1.Pod, now time.Time) {
	p.Status.Phase, p.Status.StartTime = corev1.PodRunning, ptr.To(apiTime(now))
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
		LastTransitionTime: apiTime(now)}}
}

func (w *World) buildClaim(release, pv string) {
	claim := release + "-s3gw-pvc"
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	size := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}
	w.api.create(&corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: gatewayNamespace, Name: claim},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: rwo, VolumeName: pv,
			StorageClassName: ptr.To("longhorn"), Resources: corev1.VolumeResourceRequirements{Requests: size}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: rwo, Capacity: size},
	})
	w.api.create(&corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pv},
		Spec: corev1.PersistentVolumeSpec{AccessModes: rwo, Capacity: size, StorageClassName: "longhorn",
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: gatewayNamespace, Name: claim},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: longhorn.CSIDriverName, VolumeHandle: pv, FSType: "ext4"}}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	})
}

// buildLonghornVolume creates the volume attached to node, its replicas
// healthy and in sync, and its running engine.
func (w *World) buildLonghornVolume(v *Volume, spec InstanceSpec, node *Node) {
	for k, ni := range spec.Replicas {
		r := &Replica{Name: fmt.Sprintf("%s-r-%d", v.Name, k), Node: w.nodes[ni], Running: true, Inc: 1}
		v.Replicas = append(v.Replicas, r)
		w.api.create(&longhorn.Replica{
			ObjectMeta: metav1.ObjectMeta{Namespace: longhornNamespace, Name: r.Name, Labels: map[string]string{longhorn.VolumeLabel: v.Name}},
			// controller/utils.go newReplicaCR copies the volume's revision counter setting.
			Spec: longhorn.ReplicaSpec{NodeID: r.Node.Name, VolumeName: v.Name, HealthyAt: w.nodeClock(node).Add(-time.Hour).Format(time.RFC3339),
				DesireState: stateRunning, RevisionCounterDisabled: v.RevisionCounterDisabled},
			Status: longhorn.ReplicaStatus{CurrentState: stateRunning},
		})
	}
	w.api.create(&longhorn.Volume{
		ObjectMeta: metav1.ObjectMeta{Namespace: longhornNamespace, Name: v.Name, Finalizers: []string{longhornFinalizer}},
		Spec: longhorn.VolumeSpec{NodeID: node.Name, NumberOfReplicas: len(spec.Replicas), AccessMode: "rwo",
			RevisionCounterDisabled: v.RevisionCounterDisabled},
		Status: longhorn.VolumeStatus{State: stateAttached, Robustness: robustnessHealthy, CurrentNodeID: node.Name, OwnerID: node.Name},
	})
	e := startEngine(w, v, node, v.Replicas, false)
	v.Engines, v.current, v.hist = []*Engine{e}, e, newHistory(e)
	modes := map[string]string{}
	for _, r := range v.Replicas {
		modes[r.Name] = modeRW.String()
	}
	w.api.create(&longhorn.Engine{
		ObjectMeta: metav1.ObjectMeta{Namespace: longhornNamespace, Name: engineName(v), Labels: map[string]string{longhorn.VolumeLabel: v.Name}},
		Spec:       longhorn.EngineSpec{VolumeName: v.Name, NodeID: node.Name, DesireState: stateRunning},
		Status:     longhorn.EngineStatus{CurrentState: stateRunning, ReplicaModeMap: modes},
	})

	ticket := attachmentName(v.Name, node.Name)
	w.api.create(&longhorn.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Namespace: longhornNamespace, Name: v.Name, Labels: map[string]string{"longhornvolume": v.Name}},
		Spec: longhorn.VolumeAttachmentSpec{Volume: v.Name, AttachmentTickets: map[string]*longhorn.AttachmentTicket{
			ticket: {ID: ticket, Type: longhorn.TicketTypeCSIAttacher, NodeID: node.Name,
				Parameters: map[string]string{"disableFrontend": "false", "lastAttachedBy": ""}}}},
	})
	w.api.create(&storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: ticket, Finalizers: []string{externalAttacherFinalizer}},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: longhorn.CSIDriverName, NodeName: node.Name,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To(v.Name)}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true},
	})
}

// buildTemplates creates our template (referenced by the NodeHealthCheck)
// and FAR's and SNR's, which their webhooks mark multi-template.
func (w *World) buildTemplates() {
	t := &s3gwv1alpha1.S3GWRemediationTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: remediationNamespace, Name: ourTemplateName},
		Spec:       s3gwv1alpha1.S3GWRemediationTemplateSpec{Template: s3gwv1alpha1.S3GWRemediationTemplateResource{Spec: w.sc.Spec}},
	}
	if w.sc.MultiTemplate {
		t.Annotations = map[string]string{annotations.MultipleTemplatesSupportedAnnotation: "true"}
	}
	w.api.create(t)
	if w.sc.SNR != nil {
		w.buildSNRTemplate()
	}
	if !w.sc.FAR.Installed {
		return
	}
	far := &unstructured.Unstructured{Object: map[string]any{fieldSpec: map[string]any{"template": map[string]any{fieldSpec: map[string]any{
		"agent": "fence_ipmilan", "sharedparameters": map[string]any{"--action": w.sc.FAR.Action},
		"remediationStrategy": w.sc.FAR.Strategy,
	}}}}}
	far.SetGroupVersionKind(gvkFARTemplate)
	far.SetNamespace(remediationNamespace)
	far.SetName(farTemplateName)
	far.SetAnnotations(map[string]string{annotations.MultipleTemplatesSupportedAnnotation: "true"})
	w.api.create(far)
}

// buildStaleEvidence leaves what an earlier incident left: a finished FAR
// CR (FAR re-adds its finalizer and NoSchedule taint on sight) or an
// out-of-service taint.
func (w *World) buildStaleEvidence() {
	for _, st := range w.sc.Stale {
		node := w.nodes[st.Node]
		if !st.FAR {
			taint := outOfServiceTaint()
			if st.TimeAdded {
				taint = withTimeAdded(taint, apiTime(w.adminClock().Add(-st.Age)))
			}
			w.addTaint(w.api.node(node.Name), taint, "an earlier incident")
			continue
		}
		cr := &unstructured.Unstructured{Object: map[string]any{fieldSpec: map[string]any{}}}
		cr.SetGroupVersionKind(gvkFAR)
		cr.SetNamespace(remediationNamespace)
		cr.SetName("stale-" + node.Name)
		cr.SetAnnotations(map[string]string{annotations.NodeNameAnnotation: node.Name})
		then := w.farClock().Add(-st.Age)
		for _, c := range []string{farCondition, "Succeeded"} {
			setUnstructuredCondition(cr, c, statusTrue, then)
		}
		setUnstructuredCondition(cr, "Processing", statusFalse, then)
		w.api.create(cr)
	}
}

// buildSNRTemplate is the SelfNodeRemediationTemplate of the SNR step.
func (w *World) buildSNRTemplate() {
	snr := &unstructured.Unstructured{Object: map[string]any{fieldSpec: map[string]any{"template": map[string]any{
		fieldSpec: map[string]any{"remediationStrategy": snrStrategyOutServ}}}}}
	snr.SetGroupVersionKind(gvkSNRTemplate)
	snr.SetNamespace(remediationNamespace)
	snr.SetName(snrTemplateName)
	snr.SetAnnotations(map[string]string{annotations.MultipleTemplatesSupportedAnnotation: "true"})
	w.api.create(snr)
}
