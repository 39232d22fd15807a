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

package workloads

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// TestReplacementReadsTheCacheInPlace asks Replacement each question twice,
// through a listing reader and through CachedPods over a store that holds
// the same pods, and requires the expected answer from both.
func TestReplacementReadsTheCacheInPlace(t *testing.T) {
	gateway := map[string]string{"app.kubernetes.io/name": "s3gw", "app.kubernetes.io/component": "gateway"}
	pod := func(ns, name, rs, node string, ready bool, change ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), Labels: gateway,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kindReplicaSet, Name: rs, Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: node}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		for _, c := range change {
			c(p)
		}
		return p
	}
	// A rollout's new ReplicaSet of the target's Deployment.
	rolled := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw", Name: "gw1-s3gw-7c9d4",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kindDeployment, Name: "gw1-s3gw", Controller: ptr.To(true)}}}}
	target := s3gwv1alpha1.RecordedTarget{Namespace: "s3gw", Name: "gw1-s3gw-5d8f7-old", UID: "s3gw/gw1-s3gw-5d8f7-old",
		Owner: &s3gwv1alpha1.WorkloadOwner{Kind: kindDeployment, Name: "gw1-s3gw", ReplicaSet: "gw1-s3gw-5d8f7"}}
	old := pod("s3gw", "gw1-s3gw-5d8f7-old", "gw1-s3gw-5d8f7", "node-a", true)
	deleting := func(p *corev1.Pod) { p.DeletionTimestamp, p.Finalizers = ptr.To(metav1.Now()), []string{"keep"} }
	unlabelled := func(p *corev1.Pod) { p.Labels = map[string]string{"app.kubernetes.io/name": "s3gw"} }
	tests := []struct {
		name string
		pods []*corev1.Pod
		spec s3gwv1alpha1.S3GWRemediationSpec
		want *s3gwv1alpha1.ReplacementPod
	}{
		{name: "a Ready pod of the target's ReplicaSet on another node",
			pods: []*corev1.Pod{old, pod("s3gw", "gw1-s3gw-5d8f7-new", "gw1-s3gw-5d8f7", "node-b", true)},
			want: &s3gwv1alpha1.ReplacementPod{Name: "gw1-s3gw-5d8f7-new", NodeName: "node-b"}},
		{name: "a Ready pod of a rollout's ReplicaSet",
			pods: []*corev1.Pod{old, pod("s3gw", "gw1-s3gw-7c9d4-new", "gw1-s3gw-7c9d4", "node-c", true)},
			want: &s3gwv1alpha1.ReplacementPod{Name: "gw1-s3gw-7c9d4-new", NodeName: "node-c"}},
		{name: "not Ready yet", pods: []*corev1.Pod{old, pod("s3gw", "gw1-s3gw-5d8f7-new", "gw1-s3gw-5d8f7", "node-b", false)}},
		{name: "on the failed node", pods: []*corev1.Pod{old, pod("s3gw", "gw1-s3gw-5d8f7-new", "gw1-s3gw-5d8f7", "node-a", true)}},
		{name: "not scheduled", pods: []*corev1.Pod{old, pod("s3gw", "gw1-s3gw-5d8f7-new", "gw1-s3gw-5d8f7", "", true)}},
		{name: "being deleted", pods: []*corev1.Pod{old, pod("s3gw", "gw1-s3gw-5d8f7-new", "gw1-s3gw-5d8f7", "node-b", true, deleting)}},
		{name: "in another namespace", pods: []*corev1.Pod{old, pod("other", "gw1-s3gw-5d8f7-new", "gw1-s3gw-5d8f7", "node-b", true)}},
		{name: "another gateway's pod", pods: []*corev1.Pod{old, pod("s3gw", "gw10-s3gw-5d8f7-new", "gw10-s3gw-5d8f7", "node-b", true)}},
		{name: "not selected", pods: []*corev1.Pod{old, pod("s3gw", "gw1-s3gw-5d8f7-new", "gw1-s3gw-5d8f7", "node-b", true, unlabelled)}},
		{name: "the spec's own selector",
			pods: []*corev1.Pod{old, pod("s3gw", "gw1-s3gw-5d8f7-new", "gw1-s3gw-5d8f7", "node-b", true, unlabelled)},
			spec: s3gwv1alpha1.S3GWRemediationSpec{WorkloadSelector: &s3gwv1alpha1.LabelSelector{
				MatchLabels: map[string]s3gwv1alpha1.LabelValue{"app.kubernetes.io/name": "s3gw"}}},
			want: &s3gwv1alpha1.ReplacementPod{Name: "gw1-s3gw-5d8f7-new", NodeName: "node-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []client.Object{rolled}
			store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
			for _, p := range tt.pods {
				objs = append(objs, p.DeepCopy())
				if err := store.Add(p.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			}
			c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...).Build()
			for reader, pods := range map[string]client.Reader{"listed": c, "in place": CachedPods{Reader: c, Store: store}} {
				got, err := Replacement(context.Background(), pods, c, tt.spec, target, "node-a")
				if err != nil {
					t.Fatalf("%s: %v", reader, err)
				}
				if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
					t.Errorf("%s: Replacement = %+v, want %+v", reader, got, tt.want)
				}
			}
		})
	}

	t.Run("a selector that does not parse", func(t *testing.T) {
		spec := s3gwv1alpha1.S3GWRemediationSpec{WorkloadSelector: &s3gwv1alpha1.LabelSelector{
			MatchLabels: map[string]s3gwv1alpha1.LabelValue{"-not/a/valid key": "s3gw"}}}
		store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
		_, err := Replacement(context.Background(), CachedPods{Store: store}, nil, spec, target, "node-a")
		var invalid *InvalidSelectorError
		if !errors.As(err, &invalid) {
			t.Fatalf("Replacement = %v, want an InvalidSelectorError", err)
		}
	})
}
