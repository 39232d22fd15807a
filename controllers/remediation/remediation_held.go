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
	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// heldStatus is the status of a Reconcile's passes that the next pass
// writes: the CR as the API has it, and each held pass with the status it
// read and derived, told once the status is written.
type heldStatus struct {
	written *s3gwv1alpha1.S3GWRemediation
	passes  []heldPass
}

type heldPass struct {
	scope         *scope
	before, after s3gwv1alpha1.S3GWRemediationStatus
}

// start keeps rem as the API has it, unless a pass is held: then the API
// still has the CR as the first held pass read it.
func (h *heldStatus) start(rem *s3gwv1alpha1.S3GWRemediation) {
	if h.written == nil {
		h.written = rem.DeepCopy()
	}
}

// add holds a pass that read before (a copy the pass made) and derived
// after, copied: the next pass reuses the CR it lives in.
func (h *heldStatus) add(s *scope, before, after *s3gwv1alpha1.S3GWRemediationStatus) {
	h.passes = append(h.passes, heldPass{scope: s, before: *before, after: *after.DeepCopy()})
}

// take returns the CR the status write patches and the passes it writes
// for, and empties h for the next pass.
func (h *heldStatus) take() (*s3gwv1alpha1.S3GWRemediation, []heldPass) {
	written, passes := h.written, h.passes
	*h = heldStatus{}
	return written, passes
}
