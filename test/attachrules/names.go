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

package attachrules

import (
	"crypto/sha256"
	"fmt"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// AttachmentName is the name of the storage.k8s.io VolumeAttachment of a
// Longhorn volume on a node, as the attach-detach controller computes it
// (getAttachmentName in kubernetes pkg/volume/csi/csi_attacher.go). The
// Longhorn CSI plugin uses the same string as the ID of its ticket.
func AttachmentName(volumeHandle, node string) string {
	return fmt.Sprintf("csi-%x", sha256.Sum256([]byte(volumeHandle+longhorn.CSIDriverName+node)))
}
