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

// SourceDelegate names the delegate's source, also in the fencing_blocked
// metric.
const SourceDelegate = "Delegate"

// delegate accepts the fencing CR this remediation creates from
// spec.fencing.delegate, as NHC would, once its condition became True
// during the node's current failure. Until it exists, a CR of its kind for
// the node that someone else created during this failure (NHC's own step,
// another remediator) is judged instead: it fences the same failure.
var delegate = Source{
	Name:       SourceDelegate,
	Summary:    "the fencer's CR this remediation creates from a template (FAR, SNR), once its condition became True",
	Field:      "delegate",
	EnabledCEL: "has(self.delegate)",
	Enabled:    func(f s3gwv1alpha1.FencingSpec) bool { return f.Delegate != nil },
	Judge:      judgeDelegate,
	// The delegate reports success now, unless its template cannot be used.
	Imagine: func(o failover.State, f *failover.State) {
		f.Evidence.DelegateError = o.Evidence.DelegateError
		if d := o.Spec.Fencing.Delegate; d != nil && o.Evidence.DelegateError == "" {
			cr := succeededFor(strings.TrimSuffix(d.Kind, "Template"), f.Node.Name, f.Now)
			f.Evidence.Delegate = &cr
		}
	},
	ProvesShutdown: true,
	// The fencer, once created, until it gives up.
	MayStillProve: func(o failover.State) bool {
		d := currentDelegate(o)
		return (d == nil && o.Evidence.DelegateError == "") || (d != nil && d.Failure == "")
	},
	Failed:        delegateFailure,
	FailureReason: s3gwv1alpha1.ReasonDelegateFailed,
	Working:       delegateWork,
	TimedOut:      delegateTimedOut,
	Needs: []failover.Need{
		{Group: groupFAR, Resource: "fenceagentsremediations", Verbs: failover.Write},
		{Group: groupFAR, Resource: "fenceagentsremediationtemplates", Verbs: failover.Read},
		{Group: groupSNR, Resource: "selfnoderemediations", Verbs: failover.Write},
		{Group: groupSNR, Resource: "selfnoderemediationtemplates", Verbs: failover.Read},
	},
}

func judgeDelegate(o failover.State, v *Verdict) {
	d, label := currentDelegate(o), delegateLabel(o)
	switch {
	case o.Evidence.DelegateError != "" && reusableFencer(o) == nil:
		v.lacks("delegate: " + o.Evidence.DelegateError)
	case d == nil:
		v.lacks("delegate fencing CR not created yet")
	default:
		why := fencedMissing(o, *d, o.Spec.Fencing.Delegate.ConditionType)
		if why == "" {
			v.proves(label + d.Kind + "/" + d.Name)
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
func currentDelegate(o failover.State) *failover.RemediatorCR {
	if o.Evidence.Delegate != nil {
		return o.Evidence.Delegate
	}
	return reusableFencer(o)
}

// delegateLabel says, in messages, whether currentDelegate is our own.
func delegateLabel(o failover.State) string {
	if o.Evidence.Delegate == nil {
		return "reused "
	}
	return "delegate "
}

// delegateFailure says how the fencer the delegate stands for gave up during
// the node's current failure, "" if it has not: its Succeeded=False, after
// which FAR and SNR never act on that CR again. A failure from an earlier
// failure of the node is the stale delegate's, replaced instead.
func delegateFailure(o failover.State) string {
	d := currentDelegate(o)
	if o.Spec.Fencing.Delegate == nil || d == nil || d.Failure == "" || delegateStale(o) {
		return ""
	}
	return fmt.Sprintf("%s%s/%s failed (%s)", delegateLabel(o), d.Kind, d.Name, d.Failure)
}

// reusableFencer returns a CR of the delegate's kind for the node that this
// remediation did not create, arisen after the node's last sign of life
// (aroseDuringFailure): it belongs to this failure, so creating another
// would fence twice.
func reusableFencer(o failover.State) *failover.RemediatorCR {
	if o.Evidence.Delegate != nil || o.Node.Heartbeat.NoSignOfLife() {
		return nil
	}
	for i := range o.Evidence.OtherFencers {
		if cr := &o.Evidence.OtherFencers[i]; aroseDuringFailure(o, failover.CRSighting(*cr), &cr.CreatedAt) {
			return cr
		}
	}
	return nil
}

// delegateStale is true when the delegate acted on an earlier incident and
// will not fence this failure: the controller saw it fail before it saw the
// kubelet alive again (FAR never retries a failed CR), or saw it succeed
// before it saw the node Ready again, each on the controller's own clock.
// A node rebooting from the fence (a kubelet posting Ready=False) is not
// fenced again: one incident, one fence (docs/safety.md#delegate-fencing-cr).
func delegateStale(o failover.State) bool {
	d := o.Evidence.Delegate
	if o.Spec.Fencing.Delegate == nil || d == nil {
		return false
	}
	seen, hb := o.Sighting(failover.CRSighting(*d)), o.Node.Heartbeat.Seen
	if d.Failure != "" && seen.FailedAt != nil && hb.Witnessed && hb.At.After(*seen.FailedAt) {
		return true
	}
	return d.Fenced && seen.ProvenAt != nil &&
		o.Episode != nil && !o.Episode.RecoveredAt.IsZero() && !o.Episode.RecoveredAt.Before(*seen.ProvenAt)
}

// delegateWork creates the fencer's CR while the gate waits, unless one of
// its kind already fences this failure (reusableFencer) or its template
// cannot be used, and replaces one whose success belongs to an earlier
// failure. The wait is reported with the delegate's reason when it is why
// the wait lasts: its template cannot be used, or its fencer gave up.
func delegateWork(o failover.State) Work {
	var w Work
	reused := reusableFencer(o) != nil
	if o.Evidence.DelegateError != "" && !reused {
		w.Reason = s3gwv1alpha1.ReasonInvalidDelegate
	}
	if started := delegateStartBy(o); !started.IsZero() {
		if o.Now.Before(started) {
			w.WakeAt = started
		} else {
			w.Reason, w.Message = s3gwv1alpha1.ReasonDelegateNotStarted, fmt.Sprintf(
				"%s/%s shows no sign that its fencer picked it up %s after it was created; is the fencer running, and may it read its Secrets?",
				o.Evidence.Delegate.Kind, o.Evidence.Delegate.Name, DelegateStartTimeout)
		}
	}
	if delegateFailure(o) != "" {
		w.Reason = s3gwv1alpha1.ReasonDelegateFailed
	}
	switch {
	case delegateStale(o):
		w.Actions = []failover.Action{{Kind: failover.DeleteFencer, Source: SourceDelegate}}
	case o.Evidence.Delegate == nil && o.Evidence.DelegateError == "" && !reused:
		w.Actions = []failover.Action{{Kind: failover.CreateFencer, Source: SourceDelegate}}
	}
	return w
}

// DelegateStartTimeout is how long the fencer may take to pick up the CR
// the delegate created (a condition or a finalizer on it) before the wait is
// reported as DelegateNotStarted. A working fencer takes seconds; one that
// never starts (FAR without the right to read its Secrets) never would.
const DelegateStartTimeout = time.Minute

// delegateStartBy is when the delegate's own fencer CR, not picked up yet,
// should have been: a start timeout after the controller first saw it
// pending (SawCreated, its own clock), or after its creationTimestamp
// before any sighting. Zero when there is no such CR, or it started.
func delegateStartBy(o failover.State) time.Time {
	d := o.Evidence.Delegate
	if d == nil || d.Started || d.Fenced || d.Failure != "" {
		return time.Time{}
	}
	created := d.CreatedAt
	if seen := o.Sighting(failover.CRSighting(*d)).PendingAt; seen != nil {
		created = *seen
	}
	return created.Add(DelegateStartTimeout)
}

// delegateTimedOut passes NHC's time-out on to the fencer the delegate
// created, so it stops too, unless it succeeded (RemediatorCR.MayTimeOut);
// the adapter judges that again on the CR it patches.
func delegateTimedOut(o failover.State) []failover.Action {
	if d := o.Evidence.Delegate; d != nil && !d.MayTimeOut() {
		return nil
	}
	return []failover.Action{{Kind: failover.TimeOutFencer, Source: SourceDelegate}}
}
