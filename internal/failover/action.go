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

package failover

import s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"

// Action is one write a decision asks for. The step lists them in the order
// they must happen; one executor performs them in that order and stops at
// the first error. Each is idempotent: repeated after a crash at any point,
// it finds its work done and does nothing.
type Action struct {
	Kind ActionKind
	// Source names the evidence source whose adapter performs the action
	// (internal/fencing), and Strategy the release strategy whose adapter
	// does (internal/attachments); both are empty for Evict and
	// DetachInLonghorn, which every remediation does the same way.
	Source   string
	Strategy s3gwv1alpha1.ReleaseStrategy
	// Target is the pod Evict force-deletes.
	Target *Target
	// Volumes are what DetachInLonghorn detaches, or what Release releases.
	Volumes []Volume
	// Node is true for a Release by the strategy's one write for the node.
	Node bool
}

// ActionKind says what an action does.
type ActionKind string

// The actions a decision can ask for.
const (
	// DropStaleTaintOwner removes the node's owner annotation that names
	// no out-of-service taint on the node any more, so a taint added later
	// is never taken for ours.
	DropStaleTaintOwner ActionKind = "DropStaleTaintOwner"
	// RemoveOwnTaint removes the out-of-service taint this remediation
	// added, its work done.
	RemoveOwnTaint ActionKind = "RemoveOwnTaint"
	// TimeOutFencer passes NHC's time-out on to the fencer's CR the
	// remediation created, unless it succeeded.
	TimeOutFencer ActionKind = "TimeOutFencer"
	// DeleteFencer deletes the fencer's CR the remediation created whose
	// success belongs to an earlier failure, so that a new one fences anew.
	DeleteFencer ActionKind = "DeleteFencer"
	// CreateFencer creates a fencer's CR for the node: it fences (powers
	// off) the node.
	CreateFencer ActionKind = "CreateFencer"
	// Evict force-deletes a target's pod, by UID.
	Evict ActionKind = "Evict"
	// DetachInLonghorn removes the failed node's csi-attacher tickets from
	// Longhorn's VolumeAttachments of the volumes: the release's first step.
	DetachInLonghorn ActionKind = "DetachInLonghorn"
	// Release is the release strategy's write for the volumes, or for the
	// node.
	Release ActionKind = "Release"
)

// Destructive reports whether the action deletes or releases anything.
func (a Action) Destructive() bool {
	return a.Kind == Evict || a.Kind == DetachInLonghorn || a.Kind == Release
}

// NeedsCurrentNode reports whether the action may only be made on the node
// as the decision saw it: a destructive write, or a write to the node's
// taints.
func (a Action) NeedsCurrentNode() bool { return a.Destructive() || a.Kind == RemoveOwnTaint }
