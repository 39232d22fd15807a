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

package release

import (
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// deleteVolumeAttachment deletes the storage.k8s.io VolumeAttachment of the
// volume on the node; the attach-detach controller only notices at its
// periodic sync.
var deleteVolumeAttachment = Strategy{
	Name:        s3gwv1alpha1.ReleaseDeleteVolumeAttachment,
	Summary:     "deletes the storage.k8s.io VolumeAttachment of the volume on the failed node; the attach-detach controller only notices at its periodic sync (up to a minute)",
	VolumeWrite: func(v failover.Volume) bool { return len(v.Attachments) > 0 },
	Budget:      66 * time.Second,
	Needs: []failover.Need{{Group: "storage.k8s.io", Resource: "volumeattachments", Verbs: []string{"list", "watch", failover.VerbDelete},
		Policy: "manager-attachment-deletes"}},
}
