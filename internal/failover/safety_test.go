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
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

const (
	// safetySeed makes every run explore the same observations; override
	// with FAILOVER_SAFETY_SEED to explore others.
	safetySeed         = uint64(0x53_33_67_77_2026)
	safetyObservations = 20000
	// minDestructiveShare is the share of observations that must lead to a
	// destructive decision, or the generator misses the interesting space.
	minDestructiveShare = 0.05
)

// Kinds the generator draws remediator CRs from; only the first two can be
// listed in spec.fencing.remediators.
var randomKinds = []string{farKind, snrKind, "MachineDeletionRemediation", "UnlistedRemediation"}

// TestDecideSafety checks the safety invariant of Decide on random
// observations against an oracle written from the design, not from gate.go.
func TestDecideSafety(t *testing.T) {
	g := NewWithT(t)
	seed := safetySeed
	if s := os.Getenv("FAILOVER_SAFETY_SEED"); s != "" {
		parsed, err := strconv.ParseUint(s, 0, 64)
		g.Expect(err).NotTo(HaveOccurred())
		seed = parsed
	}
	t.Logf("safety seed %#x (reproduce with FAILOVER_SAFETY_SEED=%#x)", seed, seed)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	destructive, blocked, violations := 0, 0, 0
	for i := range safetyObservations {
		o := randomObservation(r)
		d := Decide(o)
		if d.Destructive() {
			destructive++
		}
		if d.Phase == s3gwv1alpha1.PhaseWaitingForFencing {
			blocked++
		}
		found := violationsOf(o, d)
		// Liveness as well as safety: on a failed node the gate opens
		// exactly when the oracle finds the node fenced.
		if o.Node != nil && !o.Node.Ready {
			if gate := EvaluateGate(o); gate.Open != oracleFenced(o) {
				found = append(found, violation{ruleAgreement, fmt.Sprintf("gate open=%t, oracle fenced=%t, gate missing %q",
					gate.Open, oracleFenced(o), gate.Missing)})
			}
		}
		for _, v := range found {
			violations++
			if violations <= 20 {
				t.Errorf("observation %d (seed %#x): %s\nobservation: %s\ndecision: phase=%s writes=%+v",
					i, seed, v, describe(o), d.Phase, writesOf(d))
			}
		}
	}

	line := fmt.Sprintf("safety: %d random observations, %d destructive decisions, %d blocked by the gate, %d violations (seed %#x)",
		safetyObservations, destructive, blocked, violations, seed)
	t.Log(line)
	fmt.Printf("%s\n", line)
	g.Expect(violations).To(BeZero(), line)
	g.Expect(float64(destructive)).To(BeNumerically(">=", minDestructiveShare*safetyObservations),
		"the generator must reach destructive decisions often: %s", line)
	g.Expect(float64(blocked)).To(BeNumerically(">=", minDestructiveShare*safetyObservations),
		"the generator must reach a closed gate often: %s", line)
}

// TestSafetyOracleCatchesUnsafeDecisions proves the checker can fail: the
// same observations with a decider that evicts and releases without looking
// must produce violations of each kind.
func TestSafetyOracleCatchesUnsafeDecisions(t *testing.T) {
	g := NewWithT(t)
	r := rand.New(rand.NewPCG(safetySeed, 1))
	reckless := func(o Observation) Decision {
		d := Decision{Evict: o.Targets, CreateDelegate: true, AddOutOfServiceTaint: true}
		for _, t := range o.Targets {
			d.UnmarkInUse = append(d.UnmarkInUse, t.Volumes...)
			d.DeleteAttachments = append(d.DeleteAttachments, t.Volumes...)
		}
		return d
	}
	caught := map[string]int{}
	for range 2000 {
		o := randomObservation(r)
		for _, v := range violationsOf(o, reckless(o)) {
			caught[v.rule]++
		}
	}
	g.Expect(caught).To(HaveKey(ruleNode))
	g.Expect(caught).To(HaveKey(ruleReady))
	g.Expect(caught).To(HaveKey(ruleTimedOut))
	g.Expect(caught).To(HaveKey(ruleRecorded))
	g.Expect(caught).To(HaveKey(ruleGate))
	g.Expect(caught).To(HaveKey(ruleSkipped))
	g.Expect(caught).To(HaveKey(ruleReplica))
	g.Expect(caught).To(HaveKey(ruleStrategy))
	g.Expect(caught).To(HaveKey(ruleDelegate))
}

// randomObservation draws an observation over the whole input space, biased
// towards the states where the decision matters.
func randomObservation(r *rand.Rand) Observation {
	chance := func(p float64) bool { return r.Float64() < p }
	optBool := func() *bool {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return ptr.To(true)
		default:
			return ptr.To(false)
		}
	}

	o := Observation{Now: testNow, TimedOut: chance(0.1), LonghornAvailable: chance(0.85),
		OutOfServiceTaintRecorded: chance(0.5)}

	// Spec.
	f := &o.Spec.Fencing
	switch r.IntN(10) {
	case 0, 1:
		f.Mode = s3gwv1alpha1.FencingModeDisabled
	case 2:
		f.Mode = "" // not defaulted
	default:
		f.Mode = s3gwv1alpha1.FencingModeRequireEvidence
	}
	f.OutOfServiceTaint = optBool()
	f.StorageIsolation = optBool()
	for _, kind := range randomKinds[:2] {
		if chance(0.4) {
			f.Remediators = append(f.Remediators, s3gwv1alpha1.RemediatorEvidence{
				APIVersion: "example.medik8s.io/v1alpha1", Kind: kind, ConditionType: "Succeeded"})
		}
	}
	if chance(0.4) {
		f.Delegate = &s3gwv1alpha1.DelegateFencing{APIVersion: "example.medik8s.io/v1alpha1",
			Kind: delegated + "Template", Name: "ipmi", ConditionType: farCond}
	}
	o.Spec.Release.Strategy = []s3gwv1alpha1.ReleaseStrategy{"", s3gwv1alpha1.ReleaseControllerDetach,
		s3gwv1alpha1.ReleaseDeleteVolumeAttachment, s3gwv1alpha1.ReleaseOutOfServiceTaint}[r.IntN(4)]
	if chance(0.5) {
		o.Spec.ReplacementTimeout = &metav1.Duration{Duration: time.Duration(1+r.IntN(10)) * time.Minute}
	}

	// Node.
	if !chance(0.07) {
		o.Node = &Node{Name: testNode, Ready: chance(0.15),
			ForeignOutOfServiceTaint: chance(0.25), OwnOutOfServiceTaint: chance(0.25)}
	}

	// Evidence.
	for range r.IntN(4) {
		kind := randomKinds[r.IntN(len(randomKinds))]
		o.Evidence.Remediators = append(o.Evidence.Remediators,
			RemediatorCR{Kind: kind, Name: fmt.Sprintf("%s-%d", testNode, r.IntN(100)), Fenced: chance(0.4)})
	}
	if chance(0.6) {
		o.Evidence.Delegate = &RemediatorCR{Kind: delegated, Name: testNode, Fenced: chance(0.5)}
	}
	if chance(0.15) {
		o.Evidence.DelegateError = "template ipmi not found"
	}
	o.Evidence.LonghornNodeDown = chance(0.5)

	// Targets, each with unique volume names.
	skipReasons := []string{"ReadWriteMany", "not driver.longhorn.io", "no PersistentVolume bound"}
	for ti := range r.IntN(4) {
		t := Target{Namespace: "s3gw", Name: fmt.Sprintf("s3gw-%d", ti), UID: types.UID(fmt.Sprintf("uid-%d", ti)),
			Recorded: chance(0.85), PodPresent: chance(0.5)}
		if chance(0.4) {
			t.Replacement = &Replacement{Name: fmt.Sprintf("s3gw-new-%d", ti), NodeName: "worker-2"}
		}
		for vi := range r.IntN(4) {
			v := Volume{
				Claim:                   fmt.Sprintf("data-%d-%d", ti, vi),
				PersistentVolume:        fmt.Sprintf("pv-%d-%d", ti, vi),
				LonghornVolume:          fmt.Sprintf("pvc-%d-%d", ti, vi),
				ReplicaOnFailedNode:     chance(0.3),
				HealthyReplicaElsewhere: chance(0.9),
				KubeAttachment:          chance(0.5),
				InUseOnNode:             chance(0.5),
				LonghornTicket:          chance(0.5),
			}
			if chance(0.15) {
				v.SkipReason = skipReasons[r.IntN(len(skipReasons))]
			}
			t.Volumes = append(t.Volumes, v)
		}
		o.Targets = append(o.Targets, t)
	}
	if chance(0.5) {
		since := testNow.Add(-time.Duration(r.IntN(15*60)) * time.Second)
		o.ReleasedSince = &since
	}
	return o
}

// Invariant rules, named so TestSafetyOracleCatchesUnsafeDecisions can check
// each one is able to fire.
const (
	ruleNode     = "destructive without a node"
	ruleReady    = "destructive on a Ready node"
	ruleTimedOut = "destructive after NHC timed out"
	ruleRecorded = "destructive with unrecorded targets"
	ruleGate     = "destructive without fencing evidence"
	ruleSkipped  = "released a skipped volume"
	ruleReplica  = "evicted or released with no healthy replica elsewhere"
	ruleStrategy = "released against the strategy"
	ruleDelegate = "created the delegate when not allowed"
	// ruleAgreement is checked by TestDecideSafety only.
	ruleAgreement = "EvaluateGate disagrees with the oracle"
)

type violation struct{ rule, detail string }

func (v violation) String() string { return v.rule + ": " + v.detail }

// violationsOf checks d against the rules, reading o independently of
// EvaluateGate and Decide.
func violationsOf(o Observation, d Decision) []violation {
	var out []violation
	fail := func(rule, format string, args ...any) {
		out = append(out, violation{rule, fmt.Sprintf(format, args...)})
	}

	if d.Destructive() {
		switch {
		case o.Node == nil:
			fail(ruleNode, "node is nil")
		case o.Node.Ready:
			fail(ruleReady, "node is Ready")
		case !oracleFenced(o):
			fail(ruleGate, "no enabled evidence source holds in mode %q", o.Spec.Fencing.Mode)
		}
		if o.TimedOut {
			fail(ruleTimedOut, "TimedOut is set")
		}
		if len(o.Targets) == 0 {
			fail(ruleRecorded, "no targets")
		}
		for _, t := range o.Targets {
			if !t.Recorded {
				fail(ruleRecorded, "target %s not recorded", t.Name)
			}
		}
		if v, ok := unreleasableVolume(o); ok {
			fail(ruleReplica, "volume %s is unreleased and has no verified healthy replica elsewhere (Longhorn available: %t)",
				v.LonghornVolume, o.LonghornAvailable)
		}
	}

	// Every volume named by a release must be one of the observation's, not
	// skipped, not yet released, and still held the way its strategy frees.
	byName := map[string]Volume{}
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			byName[v.LonghornVolume] = v
		}
	}
	strategy := o.Spec.Release.Strategy
	checkRelease := func(list []Volume, what string, allowed bool, held func(Volume) bool) {
		for _, rv := range list {
			v, known := byName[rv.LonghornVolume]
			switch {
			case !known:
				fail(ruleStrategy, "%s of unknown volume %s", what, rv.LonghornVolume)
			case v.SkipReason != "":
				fail(ruleSkipped, "%s of skipped volume %s (%s)", what, v.LonghornVolume, v.SkipReason)
			case !allowed:
				fail(ruleStrategy, "%s of %s with strategy %q", what, v.LonghornVolume, strategy)
			case !held(v):
				fail(ruleStrategy, "%s of %s, which is not held that way", what, v.LonghornVolume)
			}
		}
	}
	controllerDetach := strategy == "" || strategy == s3gwv1alpha1.ReleaseControllerDetach
	checkRelease(d.UnmarkInUse, "unmark in use", controllerDetach, func(v Volume) bool { return v.InUseOnNode })
	checkRelease(d.DeleteAttachments, "delete attachment", strategy == s3gwv1alpha1.ReleaseDeleteVolumeAttachment,
		func(v Volume) bool { return v.KubeAttachment })

	if d.AddOutOfServiceTaint || d.RecordOutOfServiceTaint {
		switch {
		case strategy != s3gwv1alpha1.ReleaseOutOfServiceTaint:
			fail(ruleStrategy, "out-of-service taint with strategy %q", strategy)
		case o.Node != nil && (o.Node.OwnOutOfServiceTaint || o.Node.ForeignOutOfServiceTaint):
			fail(ruleStrategy, "out-of-service taint already on the node")
		case !anyUnreleasedReleasable(o):
			fail(ruleSkipped, "out-of-service taint with no releasable volume left to release")
		}
	}
	if d.AddOutOfServiceTaint && !o.OutOfServiceTaintRecorded {
		fail(ruleStrategy, "out-of-service taint added before being recorded")
	}

	for _, e := range d.Evict {
		present := false
		for _, t := range o.Targets {
			if t.UID == e.UID && t.Recorded && t.PodPresent {
				present = true
			}
		}
		if !present {
			fail(ruleRecorded, "evicts %s, which is not a recorded present target", e.Name)
		}
	}

	if d.CreateDelegate {
		switch {
		case o.Node == nil:
			fail(ruleDelegate, "node is nil")
		case o.Node.Ready:
			fail(ruleDelegate, "node is Ready")
		case o.TimedOut:
			fail(ruleDelegate, "TimedOut is set")
		case o.Spec.Fencing.Delegate == nil:
			fail(ruleDelegate, "no delegate configured")
		case o.Evidence.Delegate != nil || o.Evidence.DelegateError != "":
			fail(ruleDelegate, "delegate exists or is invalid")
		}
		if !allTargetsRecorded(o) {
			fail(ruleDelegate, "targets not recorded")
		}
	}
	return out
}

// oracleFenced is the fencing rule read straight from the design: mode
// Disabled, or one enabled source holds. Unset source flags mean enabled.
func oracleFenced(o Observation) bool {
	f := o.Spec.Fencing
	if f.Mode == s3gwv1alpha1.FencingModeDisabled {
		return true
	}
	enabled := func(b *bool) bool { return b == nil || *b }

	if enabled(f.OutOfServiceTaint) && o.Node.ForeignOutOfServiceTaint {
		return true
	}
	for _, cr := range o.Evidence.Remediators {
		for _, listed := range f.Remediators {
			if cr.Kind == listed.Kind && cr.Fenced {
				return true
			}
		}
	}
	if f.Delegate != nil && o.Evidence.Delegate != nil && o.Evidence.Delegate.Fenced && o.Evidence.DelegateError == "" {
		return true
	}
	if enabled(f.StorageIsolation) && o.LonghornAvailable && o.Evidence.LonghornNodeDown {
		volumes, isolated := 0, true
		for _, t := range o.Targets {
			for _, v := range t.Volumes {
				volumes++
				if v.SkipReason != "" || v.ReplicaOnFailedNode {
					isolated = false
				}
			}
		}
		if isolated && volumes > 0 {
			return true
		}
	}
	return false
}

// unreleasableVolume finds a Longhorn RWO volume still held on the node whose
// data has no verified healthy replica elsewhere.
func unreleasableVolume(o Observation) (Volume, bool) {
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			held := v.KubeAttachment || v.LonghornTicket
			if v.SkipReason == "" && held && (!o.LonghornAvailable || !v.HealthyReplicaElsewhere) {
				return v, true
			}
		}
	}
	return Volume{}, false
}

func anyUnreleasedReleasable(o Observation) bool {
	for _, t := range o.Targets {
		for _, v := range t.Volumes {
			if v.SkipReason == "" && (v.KubeAttachment || v.LonghornTicket) {
				return true
			}
		}
	}
	return false
}

func allTargetsRecorded(o Observation) bool {
	for _, t := range o.Targets {
		if !t.Recorded {
			return false
		}
	}
	return len(o.Targets) > 0
}

// describe prints an observation compactly for a failure message.
func describe(o Observation) string {
	s := fmt.Sprintf("timedOut=%t longhorn=%t nodeDown=%t oosRecorded=%t spec.fencing={mode:%q oos:%v si:%v remediators:%d delegate:%t} strategy=%q node=",
		o.TimedOut, o.LonghornAvailable, o.Evidence.LonghornNodeDown, o.OutOfServiceTaintRecorded,
		o.Spec.Fencing.Mode, boolPtr(o.Spec.Fencing.OutOfServiceTaint), boolPtr(o.Spec.Fencing.StorageIsolation),
		len(o.Spec.Fencing.Remediators), o.Spec.Fencing.Delegate != nil, o.Spec.Release.Strategy)
	if o.Node == nil {
		s += "nil"
	} else {
		s += fmt.Sprintf("%+v", *o.Node)
	}
	s += fmt.Sprintf(" remediators=%+v delegate=%+v delegateError=%q", o.Evidence.Remediators, o.Evidence.Delegate, o.Evidence.DelegateError)
	for _, t := range o.Targets {
		s += fmt.Sprintf("\n  target %s recorded=%t present=%t replaced=%t volumes=%+v", t.Name, t.Recorded, t.PodPresent, t.Replacement != nil, t.Volumes)
	}
	return s
}

func boolPtr(b *bool) string {
	if b == nil {
		return "unset"
	}
	return strconv.FormatBool(*b)
}
