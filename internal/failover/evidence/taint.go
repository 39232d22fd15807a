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

package evidence

import (
	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// EvidenceOutOfServiceTaint names the out-of-service taint as evidence.
const EvidenceOutOfServiceTaint = "OutOfServiceTaint"

// outOfServiceTaint accepts node.kubernetes.io/out-of-service on the node,
// added by an admin or a fencer, never by an S3GWRemediation.
var outOfServiceTaint = Source{
	Name:       EvidenceOutOfServiceTaint,
	Summary:    "node.kubernetes.io/out-of-service on the node, added by an admin or a fencer after the failure",
	Field:      "outOfServiceTaint",
	EnabledCEL: "!has(self.outOfServiceTaint) || self.outOfServiceTaint",
	Enabled:    s3gwv1alpha1.FencingSpec.OutOfServiceTaintEnabled,
	Judge: func(o failover.State, v *Verdict) {
		v.check(EvidenceOutOfServiceTaint, outOfServiceTaintMissing(o), EvidenceOutOfServiceTaint)
	},
	// Only an admin adds the taint, by hand: it is never protection.
	Imagine:        func(_ failover.State, f *failover.State) { f.Spec.Fencing.OutOfServiceTaint = new(bool) },
	NeverImagined:  "an out-of-service taint counts only when an admin adds it by hand",
	ProvesShutdown: true,
	Needs:          []failover.Need{{Resource: failover.Nodes, Verbs: failover.Read}},
}

// outOfServiceTaintMissing returns why a foreign out-of-service taint does
// not count, or "" when it does. A taint without timeAdded counts: whoever
// added it, kube-controller-manager itself acts on it for a NotReady node
// (Pod GC force-deletes the node's terminating pods, the attach-detach
// controller force-detaches its volumes), so a release we do adds nothing
// to what the taint already does.
func outOfServiceTaintMissing(o failover.State) string {
	taint := o.Node.OutOfServiceTaint
	switch {
	case !taint.Foreign():
		return "no node.kubernetes.io/out-of-service taint"
	case taint.TimeAdded == nil:
		return ""
	}
	if why := notCurrent(o, failover.TaintSighting, nil); why != "" {
		return "the node.kubernetes.io/out-of-service taint " + why
	}
	return ""
}
