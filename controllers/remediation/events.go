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

package remediation

import (
	"github.com/s3gw-tech/s3gw-remediation/internal/attachments"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
)

// Event reasons of the remediation (docs/troubleshooting.md, "Events"):
// each destructive step, on the CR and on the node, and each phase entered.
// medik8s/common's helpers add the contract's RemediationStarted,
// RemediationStopped, RemediationFinished and RemediationCannotStart.
const (
	EventFencingDisabled = "FencingDisabled"
	EventDelegateCreated = fencing.EventDelegateCreated
	EventDelegateFailed  = "DelegateFailed"
	// EventDelegateNotStarted: the delegate's fencer has not picked up the
	// CR it was given (docs/configuration.md, FAR's Secrets).
	EventDelegateNotStarted   = "DelegateNotStarted"
	EventPodEvicted           = "PodForceDeleted"
	EventVolumeUnmarked       = attachments.EventVolumeInUseCleared
	EventAttachmentDeleted    = attachments.EventVolumeAttachmentDeleted
	EventOutOfServiceTaint    = attachments.EventOutOfServiceTaintAdded
	EventTaintRemoved         = attachments.EventTaintRemoved
	EventVolumeSkipped        = "VolumeSkipped"
	EventWaitingForFencing    = "WaitingForFencing"
	EventNoHealthyReplica     = "NoHealthyReplica"
	EventRevisionCounterOff   = "RevisionCounterDisabled"
	EventLonghornMissing      = "LonghornUnavailable"
	EventReplacementMissing   = "ReplacementNotReady"
	EventS3GWMoved            = "S3GWMoved"
	EventNoWorkload           = "NoWorkloadOnNode"
	EventNodeReady            = "NodeReady"
	EventProtectedPodsRefused = "ProtectedPodsRefused"
	EventInvalidSelector      = "InvalidWorkloadSelector"
	EventEvictionTimedOut     = "EvictionTimedOut"
	EventReleaseTimedOut      = "ReleaseTimedOut"
	// EventConflictingRemediations: another remediation of the node selects
	// the same pods under different rules; neither acts.
	EventConflictingRemediations = "ConflictingRemediations"
	// EventRemediationSkipped is SNR's reason for an excluded node.
	EventRemediationSkipped = "RemediationSkipped"
)
