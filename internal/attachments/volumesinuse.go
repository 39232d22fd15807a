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

package attachments

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// InUse reports whether node.status.volumesInUse lists the volume.
func InUse(node *corev1.Node, volumeHandle string) bool {
	return slices.Contains(node.Status.VolumesInUse, longhorn.UniqueVolumeName(volumeHandle))
}

// UnmarkInUse removes the volumes from the node's status.volumesInUse, so the
// attach-detach controller sees them unmounted and detaches them through its
// own safe path. Only a dead kubelet's list may be edited: a live kubelet
// would rewrite it. The patch is optimistic-locked on the node's
// resourceVersion, so it never overwrites a concurrent change.
func UnmarkInUse(ctx context.Context, c client.Client, node *corev1.Node, volumeHandles []string) (int, error) {
	drop := map[corev1.UniqueVolumeName]bool{}
	for _, h := range volumeHandles {
		drop[longhorn.UniqueVolumeName(h)] = true
	}
	kept := make([]corev1.UniqueVolumeName, 0, len(node.Status.VolumesInUse))
	for _, v := range node.Status.VolumesInUse {
		if !drop[v] {
			kept = append(kept, v)
		}
	}
	removed := len(node.Status.VolumesInUse) - len(kept)
	if removed == 0 {
		return 0, nil
	}
	patch, err := json.Marshal(volumesInUsePatch{Metadata: lockOn{ResourceVersion: node.ResourceVersion},
		Status: volumesInUse{VolumesInUse: kept}})
	if err != nil {
		return 0, err
	}
	if err := c.Status().Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return 0, fmt.Errorf("removing %d volume(s) from status.volumesInUse of node %s: %w", removed, node.Name, err)
	}
	return removed, nil
}

// volumesInUsePatch is the JSON merge patch UnmarkInUse sends: the whole
// list (a merge patch replaces lists), locked on the node's
// resourceVersion. Written out rather than diffed from two copies of the
// Node (client.MergeFrom), which would encode the whole Node twice and
// keep encoding/json's field tables of every Node type for good.
type volumesInUsePatch struct {
	Metadata lockOn       `json:"metadata"`
	Status   volumesInUse `json:"status"`
}

type lockOn struct {
	ResourceVersion string `json:"resourceVersion"`
}

type volumesInUse struct {
	VolumesInUse []corev1.UniqueVolumeName `json:"volumesInUse"`
}
