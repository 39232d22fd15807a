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
	"fmt"
	"strings"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// SourceDelegate names the delegate's source, also in the fencing_blocked
// metric.
const SourceDelegate = "Delegate"

// delegate accepts the fencing CR this remediation creates from
// spec.fencing.delegate, as NHC would, once its condition became True
// during the node's current failure. Until it exists, a CR of its kind for
// the node that someone else created during this failure (NHC's own step,
// another remediator) is judged instead: it fences the same failure.
var delegate = EvidenceSource{
	Name:    SourceDelegate,
	Enabled: func(f s3gwv1alpha1.FencingSpec) bool { return f.Delegate != nil },
	Judge:   judgeDelegate,
	// The delegate reports success now, unless its template cannot be used.
	Imagine: func(o Observation, f *Observation) {
		f.Evidence.DelegateError = o.Evidence.DelegateError
		if d := o.Spec.Fencing.Delegate; d != nil && o.Evidence.DelegateError == "" {
			cr := succeededFor(strings.TrimSuffix(d.Kind, "Template"), f.Node.Name, f.Now)
			f.Evidence.Delegate = &cr
		}
	},
	ProvesShutdown: true,
	// The fencer, once created, until it gives up.
	MayStillHold: func(o Observation) bool {
		d := currentDelegate(o)
		return (d == nil && o.Evidence.DelegateError == "") || (d != nil && d.Failure == "")
	},
	Needs: []Need{
		{Group: groupFAR, Resource: "fenceagentsremediations", Verbs: write},
		{Group: groupFAR, Resource: "fenceagentsremediationtemplates", Verbs: read},
		{Group: groupSNR, Resource: "selfnoderemediations", Verbs: write},
		{Group: groupSNR, Resource: "selfnoderemediationtemplates", Verbs: read},
	},
}

func judgeDelegate(o Observation, v *Verdict) {
	d, label := currentDelegate(o), delegateLabel(o)
	switch {
	case o.Evidence.DelegateError != "" && reusableFencer(o) == nil:
		v.lacks("delegate: " + o.Evidence.DelegateError)
	case d == nil:
		v.lacks("delegate fencing CR not created yet")
	default:
		why := fencedMissing(o, *d, o.Spec.Fencing.Delegate.ConditionType)
		if why == "" {
			v.holds(label + d.Kind + "/" + d.Name)
			return
		}
		if d.Failure != "" {
			why = "failed (" + d.Failure + ")"
		}
		v.lacks(label + d.Kind + "/" + d.Name + " " + why)
	}
	v.blocks(SourceDelegate)
}

// currentDelegate is the fencing CR the delegate stands for: the one this
// remediation created or, before it exists, the one it reuses; nil if none.
func currentDelegate(o Observation) *RemediatorCR {
	if o.Evidence.Delegate != nil {
		return o.Evidence.Delegate
	}
	return reusableFencer(o)
}

// delegateLabel says, in messages, whether currentDelegate is our own.
func delegateLabel(o Observation) string {
	if o.Evidence.Delegate == nil {
		return "reused "
	}
	return "delegate "
}

// delegateFailure says how the fencer the delegate stands for gave up during
// the node's current failure, "" if it has not: its Succeeded=False, after
// which FAR and SNR never act on that CR again. A failure from an earlier
// failure of the node is the stale delegate's, replaced instead.
func delegateFailure(o Observation) string {
	d := currentDelegate(o)
	if o.Spec.Fencing.Delegate == nil || d == nil || d.Failure == "" || delegateStale(o) {
		return ""
	}
	return fmt.Sprintf("%s%s/%s failed (%s)", delegateLabel(o), d.Kind, d.Name, d.Failure)
}

// othersMayStillHold reports whether an enabled evidence source other than
// the delegate may still hold for the node's current failure
// (EvidenceSource.MayStillHold); when the release strategy needs proof of
// shutdown, only the sources that give it count.
func othersMayStillHold(o Observation) bool {
	needsShutdown := StrategyOf(o.Spec.Release.Strategy).NeedsProofOfShutdown
	for _, source := range Sources {
		switch {
		case source.Name == SourceDelegate, !source.Enabled(o.Spec.Fencing), source.MayStillHold == nil,
			needsShutdown && !source.ProvesShutdown:
			continue
		}
		if source.MayStillHold(o) {
			return true
		}
	}
	return false
}

// reusableFencer returns a CR of the delegate's kind for the node that this
// remediation did not create, created after the node's last sign of life:
// it belongs to this failure, so creating another would fence twice.
func reusableFencer(o Observation) *RemediatorCR {
	if o.Evidence.Delegate != nil {
		return nil
	}
	last := o.Node.Heartbeat.LastSignOfLife()
	for i := range o.Evidence.OtherFencers {
		if cr := &o.Evidence.OtherFencers[i]; cr.CreatedAt.After(last) {
			return cr
		}
	}
	return nil
}

// delegateStale is true when the delegate acted on an earlier incident and
// will not fence this failure: it failed before the node's last sign of life
// (FAR never retries a failed CR), or it fenced an earlier incident. A
// success counts as earlier when it is older than the node's last sign of
// life, so it proves nothing now, and the node was seen Ready again since
// that fence (both times are the API's, to the second: a tie counts as
// since), so the node fails anew.
//
// One incident, for a delegate, runs from its fence until a pass sees the
// node Ready again (Episode.RecoveredAt). Within it, signs of life after the
// fence (a rebooting kubelet posting Ready=False, renewing its Lease) are
// the node coming back from that fence: the gate does not trust the old
// success (notCurrent), but no second fence is started either, so a node
// is never power-cycled again in the middle of its reboot. A node that
// never comes back stays with the one fence; NHC's time-out and escalation
// take over from there.
func delegateStale(o Observation) bool {
	d := o.Evidence.Delegate
	if o.Spec.Fencing.Delegate == nil || d == nil {
		return false
	}
	last := o.Node.Heartbeat.LastSignOfLife()
	if d.Failure != "" && d.FailedAt != nil && !d.FailedAt.After(last) {
		return true
	}
	return d.Fenced && d.FencedAt != nil && !d.FencedAt.After(last) &&
		o.Episode != nil && !o.Episode.RecoveredAt.IsZero() && !o.Episode.RecoveredAt.Before(*d.FencedAt)
}
