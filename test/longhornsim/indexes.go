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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// Cache indexes: the kubelet, the deletion policy and the instance
// managers look things up by node.
const (
	podNodeNameField        = "spec.nodeName"
	attachmentNodeNameField = "spec.nodeName"
	replicaNodeIDField      = "spec.nodeID"
)

func addIndexes(ctx context.Context, mgr manager.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &corev1.Pod{}, podNodeNameField, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return fmt.Errorf("indexing pods by node: %w", err)
	}
	if err := idx.IndexField(ctx, &storagev1.VolumeAttachment{}, attachmentNodeNameField, func(o client.Object) []string {
		return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName}
	}); err != nil {
		return fmt.Errorf("indexing VolumeAttachments by node: %w", err)
	}
	if err := idx.IndexField(ctx, &longhorn.Replica{}, replicaNodeIDField, func(o client.Object) []string {
		return []string{o.(*longhorn.Replica).Spec.NodeID}
	}); err != nil {
		return fmt.Errorf("indexing Replicas by node: %w", err)
	}
	return nil
}
