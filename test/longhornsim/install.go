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

package longhornsim

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

// install puts Longhorn's footprint in the cluster: the CRD fixtures, the
// longhorn-system namespace, the CSIDriver and the StorageClass. Existing
// objects are left alone, so installing twice is harmless.
func install(ctx context.Context, c client.Client, crdDir string) error {
	if crdDir == "" {
		root, err := cluster.RepoRoot()
		if err != nil {
			return fmt.Errorf("locating Longhorn CRD fixtures: %w", err)
		}
		crdDir = filepath.Join(root, "test", "crds", "longhorn")
	}
	crds, err := cluster.ReadManifests(crdDir)
	if err != nil {
		return err
	}
	if err := cluster.CreateIfAbsent(ctx, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); err != nil {
		return err
	}
	for _, crd := range crds {
		if err := cluster.CreateIfAbsent(ctx, c, crd); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		if err := cluster.WaitEstablished(ctx, c, crd.GetName()); err != nil {
			return err
		}
	}
	if err := warmUp(ctx, c); err != nil {
		return err
	}
	for _, obj := range footprint() {
		if err := cluster.CreateIfAbsent(ctx, c, obj); err != nil {
			return err
		}
	}
	return nil
}

// warmUp makes one dry-run create per Longhorn kind. kube-apiserver sets up
// a new CRD's write path on its first create, which takes seconds; paying
// that here keeps it out of the first attach that a test times.
func warmUp(ctx context.Context, c client.Client) error {
	om := metav1.ObjectMeta{Namespace: Namespace, Name: "longhornsim-warm-up"}
	objs := []client.Object{
		&longhorn.Volume{ObjectMeta: om}, &longhorn.Engine{ObjectMeta: om}, &longhorn.Replica{ObjectMeta: om},
		&longhorn.Node{ObjectMeta: om}, &longhorn.VolumeAttachment{ObjectMeta: om}, &longhorn.InstanceManager{ObjectMeta: om},
	}
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i, obj := range objs {
		wg.Go(func() {
			// An established CRD may take a moment to show up in discovery.
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				err := c.Create(ctx, obj, client.DryRunAll)
				if meta.IsNoMatchError(err) {
					return false, nil
				}
				return true, client.IgnoreAlreadyExists(err)
			})
			if err != nil {
				errs[i] = fmt.Errorf("warming up %T: %w", obj, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// footprint is what else of the Longhorn Helm chart the simulator needs.
func footprint() []client.Object {
	persistent := []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	reclaim := corev1.PersistentVolumeReclaimDelete
	binding := storagev1.VolumeBindingImmediate
	return []client.Object{
		&storagev1.CSIDriver{
			ObjectMeta: metav1.ObjectMeta{Name: longhorn.CSIDriverName},
			Spec: storagev1.CSIDriverSpec{
				AttachRequired:       ptr.To(true),
				PodInfoOnMount:       ptr.To(true),
				VolumeLifecycleModes: persistent,
			},
		},
		&storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{
				Name:        StorageClassName,
				Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
			},
			Provisioner:          longhorn.CSIDriverName,
			ReclaimPolicy:        &reclaim,
			VolumeBindingMode:    &binding,
			AllowVolumeExpansion: ptr.To(true),
			// The class docs/configuration.md asks s3gw for: the revision
			// counter on, which Longhorn's CSI default turns off.
			Parameters: map[string]string{
				"numberOfReplicas":        "3",
				"staleReplicaTimeout":     "30",
				"fsType":                  "ext4",
				"dataEngine":              "v1",
				disableRevisionCounterKey: "false",
			},
		},
	}
}
