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

// Names shared with real Longhorn and Kubernetes.
const (
	// Namespace is where Longhorn keeps its custom resources.
	Namespace = "longhorn-system"
	// StorageClassName is the StorageClass that provisions Longhorn volumes.
	StorageClassName = "longhorn"
	// AttacherFinalizer is the finalizer Longhorn's csi-attacher sidecar puts
	// on the storage.k8s.io VolumeAttachments it handles.
	AttacherFinalizer = "external-attacher/driver-longhorn-io"
)
