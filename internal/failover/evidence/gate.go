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
	"fmt"
	"strings"
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// EvidenceFencingDisabled is the evidence status records when fencing.mode
// is Disabled.
const EvidenceFencingDisabled = "FencingDisabled"

// Gate is the fencing gate's verdict: may the node's volumes be released?
type Gate struct {
	// Open is true when eviction and release are safe.
	Open bool
	// Disabled is true when fencing.mode is Disabled and the gate was skipped.
	Disabled bool
	// Evidence lists what proved the node fenced.
	Evidence []string
	// ProvesShutdown is true when a source that proved the node fenced
	// shows it off (Source.ProvesShutdown), not only its storage cut off.
	ProvesShutdown bool
	// Missing says, when closed, what is missing.
	Missing string
	// MissingSources names the enabled evidence sources that prove nothing
	// (a bounded set, used as a metric label).
	MissingSources []string
}

// Evaluate decides whether the failed node is proven unable to write. It
// never opens for a missing or Ready node. In RequireEvidence mode one
// enabled evidence source must prove it; each is judged by its descriptor
// (Sources), in order.
func Evaluate(o failover.State) Gate {
	switch {
	case o.Node == nil:
		return Gate{Missing: "the node does not exist"}
	case o.Node.Ready:
		return Gate{Missing: fmt.Sprintf("node %s is Ready", o.Node.Name)}
	case o.Spec.Fencing.Mode == s3gwv1alpha1.FencingModeDisabled:
		return Gate{Open: true, Disabled: true, Evidence: []string{EvidenceFencingDisabled}}
	}

	var v Verdict
	shutdown := false
	for _, source := range Enabled(o.Spec.Fencing) {
		proven := len(v.evidence)
		source.Judge(o, &v)
		shutdown = shutdown || (source.ProvesShutdown && len(v.evidence) > proven)
	}
	if len(v.evidence) > 0 {
		return Gate{Open: true, Evidence: v.evidence, ProvesShutdown: shutdown}
	}
	return Gate{Missing: strings.Join(v.missing, "; "), MissingSources: v.sources}
}

// notCurrent returns why the named timed evidence, created at createdAt by
// kube-apiserver's clock (nil for a taint), does not prove the node's
// current failure, or "" when it does. The node must have shown a sign of
// life to order it against; the evidence must have arisen after the last
// one, on a clock the controller trusts (aroseDuringFailure), so evidence
// from a failure the node recovered from never counts; and the kubelet
// must have gone silent since, on a trusted clock (Heartbeat.Silent): a
// Lease still being renewed contradicts any claim that the node is fenced.
func notCurrent(o failover.State, name string, createdAt *time.Time) string {
	hb := o.Node.Heartbeat
	switch {
	case hb.NoSignOfLife():
		return "cannot be tied to this failure: the node has shown no sign of life (no Lease renewal, no status post)"
	case !aroseDuringFailure(o, name, createdAt):
		return "is not known to be from this failure: not created after the node went Unknown, nor seen pending since it was alive"
	case !hb.Silent(o.Now):
		return fmt.Sprintf("is not trusted yet: the node's heartbeat changed at %s, less than a Lease duration (%s) ago",
			failover.Stamp(hb.Seen.At), hb.LeaseDurationOrDefault()) + hb.ControlPlaneSilence()
	}
	return ""
}
