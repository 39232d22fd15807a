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

package prepull

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var created = time.Date(2026, time.March, 4, 12, 0, 0, 0, time.UTC)

// gatewayPod is the s3gw chart's gateway pod of Deployment demo-s3gw on
// node, created at the given minute.
func gatewayPod(name, node string, minute int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw", Name: name,
			CreationTimestamp: metav1.NewTime(created.Add(time.Duration(minute) * time.Minute)),
			Labels:            map[string]string{"app.kubernetes.io/name": "s3gw", "pod-template-hash": "5d8f7c"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "demo-s3gw-5d8f7c",
				UID: "rs-uid", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			NodeName:         node,
			InitContainers:   []corev1.Container{{Name: "init", Image: "quay.io/s3gw/s3gw:v0.99"}},
			Containers:       []corev1.Container{{Name: "s3gw", Image: "quay.io/s3gw/s3gw:v0.99"}, {Name: "ui", Image: "quay.io/s3gw/ui:v0.99"}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "quay"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func node(name string, ready bool, labels map[string]string, taints ...corev1.Taint) corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	withHostname := map[string]string{corev1.LabelHostname: name}
	maps.Copy(withHostname, labels)
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: withHostname},
		Spec:   corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
}
