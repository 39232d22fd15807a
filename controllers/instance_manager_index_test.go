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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// The index the passes read a replica node's instance managers through is
// added to the manager cache's informer only once a pass finds Longhorn
// served, after the informer started (the watches start it first).
var _ = Describe("The instance manager index", func() {
	It("gives each replica node its own instance managers, added to a running informer, safely twice", func(ctx SpecContext) {
		id := string(uuid.NewUUID())[:8]
		nodeA, nodeB := "im-index-a-"+id, "im-index-b-"+id
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "longhorn-system"}}
		if err := k8sClient.Create(ctx, ns); !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		volume := "pvc-im-index-" + id
		Expect(k8sClient.Create(ctx, &longhorn.Volume{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: volume}})).To(Succeed())
		for _, node := range []string{nodeA, nodeB} {
			Expect(k8sClient.Create(ctx, &longhorn.Replica{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: volume + "-r-" + node,
					Labels: map[string]string{longhorn.VolumeLabel: volume}},
				Spec: longhorn.ReplicaSpec{NodeID: node, VolumeName: volume, HealthyAt: "2026-12-03T00:00:00Z"}})).To(Succeed())
		}
		// Two on node A (a restart leaves an old one), one on node B.
		state := map[string]string{"im-a-old-" + id: longhorn.InstanceManagerUnknown, "im-a-" + id: longhorn.InstanceManagerRunning,
			"im-b-" + id: longhorn.InstanceManagerRunning}
		onNode := map[string]string{"im-a-old-" + id: nodeA, "im-a-" + id: nodeA, "im-b-" + id: nodeB}
		for name, node := range onNode {
			im := &longhorn.InstanceManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name,
				Labels: map[string]string{longhorn.InstanceManagerNodeLabel: node}}, Spec: longhorn.InstanceManagerSpec{NodeID: node}}
			Expect(k8sClient.Create(ctx, im)).To(Succeed())
			im.Status = longhorn.InstanceManagerStatus{CurrentState: state[name], InstanceReplicas: map[string]longhorn.InstanceProcess{
				volume + "-r-" + node: {Status: longhorn.InstanceProcessStatus{State: longhorn.InstanceManagerRunning}}}}
			Expect(k8sClient.Status().Update(ctx, im)).To(Succeed())
		}

		opts := CacheOptions(DefaultWorkloadCache())
		opts.Scheme = env.Scheme
		c, err := cache.New(cfg, opts)
		Expect(err).NotTo(HaveOccurred())
		cacheCtx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { _ = c.Start(cacheCtx) }()
		_, err = c.GetInformer(ctx, &longhorn.InstanceManager{})
		Expect(err).NotTo(HaveOccurred())

		index := storage.NewInstanceManagerIndex(c)
		spec := s3gwv1alpha1.S3GWRemediationSpec{}
		target := s3gwv1alpha1.RecordedVolume{ClaimName: "data", LonghornVolume: volume}
		readWith := func(g Gomega, index *storage.InstanceManagerIndex) map[string][]failover.InstanceManager {
			pass := storage.Observer{Client: c, APIReader: k8sClient, InstanceManagers: index}.Pass(spec, time.Now())
			g.Expect(pass.ReadLonghorn(ctx)).To(Succeed())
			g.Expect(pass.LonghornAvailable).To(BeTrue())
			v, err := pass.Volume(ctx, target, nodeA)
			g.Expect(err).NotTo(HaveOccurred())
			out := map[string][]failover.InstanceManager{}
			for _, r := range v.Replicas {
				out[r.Node] = r.Host.InstanceManagers
			}
			return out
		}
		read := func(g Gomega) map[string][]failover.InstanceManager { return readWith(g, index) }
		running := func(name, node string) failover.InstanceManager {
			return failover.InstanceManager{Name: name, State: state[name], Replicas: map[string]string{volume + "-r-" + node: "running"}}
		}
		want := map[string][]failover.InstanceManager{
			nodeA: {running("im-a-"+id, nodeA), running("im-a-old-"+id, nodeA)},
			nodeB: {running("im-b-"+id, nodeB)},
		}
		Eventually(read).WithContext(ctx).WithTimeout(10 * time.Second).Should(Equal(want))
		Expect(read(Default)).To(Equal(want), "a second pass reads through the index it added")
		// A second index on the same cache (another reconciler's) finds the
		// informer indexed and reads through the same index.
		Expect(readWith(Default, storage.NewInstanceManagerIndex(c))).To(Equal(want))

		// Without the index, a pass scans the namespace and reads the same.
		pass := storage.Observer{Client: c, APIReader: k8sClient}.Pass(spec, time.Now())
		Expect(pass.ReadLonghorn(ctx)).To(Succeed())
		v, err := pass.Volume(ctx, target, nodeA)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Replicas).To(HaveLen(2))
		Expect(v.Replicas[0].Host.InstanceManagers).To(Equal(want[v.Replicas[0].Node]))

		// The index holds what the cache holds: a new instance manager is read.
		late := &longhorn.InstanceManager{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "im-b-late-" + id},
			Spec: longhorn.InstanceManagerSpec{NodeID: nodeB}}
		Expect(k8sClient.Create(ctx, late)).To(Succeed())
		Eventually(func(g Gomega) []failover.InstanceManager { return read(g)[nodeB] }).WithContext(ctx).WithTimeout(10 * time.Second).
			Should(ContainElement(failover.InstanceManager{Name: late.Name, Replicas: map[string]string{}}))
		for name := range onNode {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &longhorn.InstanceManager{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}}))).To(Succeed())
		}
		Expect(k8sClient.Delete(ctx, late)).To(Succeed())
	})
})
