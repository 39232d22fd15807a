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

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TaintOwnerRecord is the node's owner annotation: the S3GWRemediation that
// added the out-of-service taint, and the timeAdded it stamped on that taint.
type TaintOwnerRecord struct {
	Owner     types.UID
	TimeAdded time.Time
}

// TaintOwnership judges the node's owner annotation (nil when there is
// none) against the out-of-service taint on the node (nil when there is
// none). The taint is trusted as the record's owner's only while both are
// there and the record names that very taint (same timeAdded, to the
// second): FAR and SNR remove the taint by key and effect and leave the
// annotation behind, and a taint someone adds later is theirs, never ours.
// stale is true when the annotation names no taint on the node: it is to be
// removed, by whichever step sees it.
func TaintOwnership(record *TaintOwnerRecord, taint *Taint) (owner types.UID, stale bool) {
	switch {
	case record == nil:
		return "", false
	case taint == nil || taint.TimeAdded == nil || record.Owner == "" ||
		!taint.TimeAdded.Truncate(time.Second).Equal(record.TimeAdded.Truncate(time.Second)):
		return "", true
	}
	return record.Owner, false
}
