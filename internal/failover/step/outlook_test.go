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

package step

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

// runningTarget is an s3gw pod running on testNode now, its volume's
// replicas on the given nodes (healthy, reachable), as the protection
// report observes it: nothing recorded, nothing attached yet.
func runningTarget(replicaNodes ...string) failover.Target {
	v := failover.Volume{Claim: "data-s3gw", PersistentVolume: "pv-s3gw", LonghornVolume: "pvc-s3gw"}
	for _, n := range replicaNodes {
		v.Replicas = append(v.Replicas, fixture.ReplicaOn("pvc-s3gw", n))
	}
	return failover.Target{Namespace: "s3gw", Name: "s3gw-0", UID: "uid-0", Volumes: []failover.Volume{v}}
}

func outlookObservation(spec s3gwv1alpha1.S3GWRemediationSpec, targets ...failover.Target) failover.Observation {
	return failover.Observation{Now: fixture.Now, Spec: spec, Node: &failover.Node{Name: fixture.NodeName, Ready: true},
		LonghornAvailable: true, Targets: targets}
}

func farDelegate() *s3gwv1alpha1.DelegateFencing {
	return &s3gwv1alpha1.DelegateFencing{APIVersion: "fence-agents-remediation.medik8s.io/v1alpha1",
		Kind: "FenceAgentsRemediationTemplate", Name: "far", ConditionType: fixture.FARCondition}
}

func TestIfNodeFailed(t *testing.T) {
	// The fencers are the only evidence sources of these specs.
	withDelegate := s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
		StorageIsolation: ptr.To(false), Delegate: farDelegate()}}
	withFAR := s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false),
		Remediators: []s3gwv1alpha1.RemediatorEvidence{{Kind: fixture.FARKind, ConditionType: fixture.FARCondition}}}}
	taintOnly := s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false)}}
	oosRelease := s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{Strategy: s3gwv1alpha1.ReleaseOutOfServiceTaint}}
	disabled := s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{Mode: s3gwv1alpha1.FencingModeDisabled}}

	unhealthyElsewhere := runningTarget(fixture.NodeName, "worker-2")
	unhealthyElsewhere.Volumes[0].Replicas[1].Healthy = false
	unreachableElsewhere := runningTarget("worker-2", "worker-3")
	unreachableElsewhere.Volumes[0].Replicas[1].Host = fixture.DownNode()
	// An attached volume's replicas run: their instance managers list them.
	listed := runningTarget("worker-2", "worker-3")
	for i := range listed.Volumes[0].Replicas {
		r := &listed.Volumes[0].Replicas[i]
		r.Host.InstanceManagers = []failover.InstanceManager{{Name: "im-" + r.Node, State: "running", Replicas: map[string]string{r.Name: "running"}}}
	}
	imUnknown := runningTarget("worker-2", "worker-3")
	imUnknown.Volumes[0].Replicas[1].Host.InstanceManagers = []failover.InstanceManager{{Name: "im-worker-3", State: "unknown"}}
	rwx := runningTarget("worker-2")
	rwx.Volumes[0].SkipReason = "not ReadWriteOnce: a shared volume needs no release"

	tests := []struct {
		name     string
		o        failover.Observation
		fails    bool
		evidence []string
		reason   string
		message  string
	}{
		{name: "replicas only elsewhere: storage isolation would hold",
			o:     outlookObservation(s3gwv1alpha1.S3GWRemediationSpec{}, runningTarget("worker-2", "worker-3")),
			fails: true, evidence: []string{evidence.EvidenceStorageIsolation}},
		{name: "replicas running now: the release's first step would stop them",
			o:     outlookObservation(s3gwv1alpha1.S3GWRemediationSpec{}, listed),
			fails: true, evidence: []string{evidence.EvidenceStorageIsolation}},
		{name: "an instance manager Longhorn counts unknown could not confirm its replica's stop",
			o:      outlookObservation(s3gwv1alpha1.S3GWRemediationSpec{}, imUnknown),
			reason: s3gwv1alpha1.ReasonReplicaStopUnconfirmed, message: "instance manager im-worker-3 on worker-3 is unknown"},
		{name: "a pod with finalizers on storage isolation alone: it would not be force-deleted",
			o: func() failover.Observation {
				t := runningTarget("worker-2", "worker-3")
				t.Finalizers = []string{"example.com/hold"}
				return outlookObservation(s3gwv1alpha1.S3GWRemediationSpec{}, t)
			}(),
			reason: s3gwv1alpha1.ReasonPodFinalizers, message: "example.com/hold"},
		{name: "a pod with finalizers and a fencer: the fenced node's pod is force-deleted",
			o: func() failover.Observation {
				t := runningTarget("worker-2", "worker-3")
				t.Finalizers = []string{"example.com/hold"}
				return outlookObservation(withFAR, t)
			}(),
			fails: true, evidence: []string{fixture.FARKind + "/" + fixture.NodeName}},
		{name: "a replica on the node and no fencer: nothing would hold, and the message names the replica",
			o:      outlookObservation(s3gwv1alpha1.S3GWRemediationSpec{}, runningTarget(fixture.NodeName, "worker-2")),
			reason: s3gwv1alpha1.ReasonNoFencingEvidence, message: "replica pvc-s3gw-r-worker-1 of pvc-s3gw is on the node"},
		{name: "a replica on the node and a delegate: fencing cannot save writes only that replica holds",
			o:      outlookObservation(withDelegate, runningTarget(fixture.NodeName, "worker-2")),
			reason: s3gwv1alpha1.ReasonReplicasUnreachable, message: "pvc-s3gw-r-worker-1"},
		{name: "a replica on the node, a delegate and requireReachableReplicas false: the delegate would hold",
			o: func() failover.Observation {
				spec := withDelegate
				spec.Release.RequireReachableReplicas = ptr.To(false)
				return outlookObservation(spec, runningTarget(fixture.NodeName, "worker-2"))
			}(),
			fails: true, evidence: []string{"delegate " + fixture.DelegateKind + "/" + fixture.NodeName}},
		{name: "a usable delegate would hold",
			o:     outlookObservation(withDelegate, runningTarget("worker-2")),
			fails: true, evidence: []string{"delegate " + fixture.DelegateKind + "/" + fixture.NodeName}},
		{name: "a delegate whose template is missing would not hold",
			o: func() failover.Observation {
				o := outlookObservation(withDelegate, runningTarget("worker-2"))
				o.Evidence.DelegateError = "template FenceAgentsRemediationTemplate s3gw/far not found"
				return o
			}(),
			reason: s3gwv1alpha1.ReasonNoFencingEvidence, message: "delegate: template FenceAgentsRemediationTemplate s3gw/far not found"},
		{name: "a listed remediator whose kind is served would hold",
			o:     outlookObservation(withFAR, runningTarget("worker-2")),
			fails: true, evidence: []string{fixture.FARKind + "/" + fixture.NodeName}},
		{name: "a listed remediator whose kind is not installed would not",
			o: func() failover.Observation {
				o := outlookObservation(withFAR, runningTarget("worker-2"))
				o.Evidence.InvalidRemediators = map[string]string{fixture.FARKind: fixture.FARKind + " is not installed"}
				return o
			}(),
			reason: s3gwv1alpha1.ReasonNoFencingEvidence, message: fixture.FARKind + ": " + fixture.FARKind + " is not installed"},
		{name: "the out-of-service taint alone never protects",
			o:      outlookObservation(taintOnly, runningTarget("worker-2")),
			reason: s3gwv1alpha1.ReasonNoFencingEvidence, message: "an out-of-service taint counts only when an admin adds it by hand"},
		{name: "a replica on another node Longhorn cannot reach",
			o:      outlookObservation(s3gwv1alpha1.S3GWRemediationSpec{}, unreachableElsewhere),
			reason: s3gwv1alpha1.ReasonNoFencingEvidence, message: "which longhorn-manager cannot reach"},
		{name: "OutOfServiceTaint release on storage isolation alone needs proof of shutdown",
			o:      outlookObservation(oosRelease, runningTarget("worker-2")),
			reason: s3gwv1alpha1.ReasonNeedsProofOfShutdown, message: "needs proof the node is shut down"},
		{name: "fenced by a delegate, but the only replica elsewhere is not healthy",
			o:      outlookObservation(withDelegate, unhealthyElsewhere),
			reason: s3gwv1alpha1.ReasonNoHealthyReplica, message: "No healthy replica on another node for pvc-s3gw"},
		{name: "a single replica, on the node itself",
			o:      outlookObservation(withDelegate, runningTarget(fixture.NodeName)),
			reason: s3gwv1alpha1.ReasonNoHealthyReplica},
		{name: "Longhorn not installed",
			o: func() failover.Observation {
				o := outlookObservation(withDelegate, runningTarget())
				o.LonghornAvailable = false
				return o
			}(),
			reason: s3gwv1alpha1.ReasonLonghornUnavailable},
		{name: "an RWX volume would stay attached",
			o:      outlookObservation(withDelegate, rwx),
			reason: s3gwv1alpha1.ReasonNotLonghornRWO, message: "volume data-s3gw of s3gw/s3gw-0 is not ReadWriteOnce"},
		{name: "fencing disabled fails over without evidence",
			o:     outlookObservation(disabled, runningTarget(fixture.NodeName, "worker-2")),
			fails: true, evidence: []string{evidence.EvidenceFencingDisabled}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := IfNodeFailed(tt.o)
			g.Expect(got.FailsOver).To(Equal(tt.fails), "%+v", got)
			g.Expect(got.Reason).To(Equal(tt.reason))
			if tt.fails {
				g.Expect(got.Evidence).To(Equal(tt.evidence))
				g.Expect(got.Message).To(BeEmpty())
			} else {
				g.Expect(got.Message).NotTo(BeEmpty())
				g.Expect(got.Message).To(ContainSubstring(tt.message))
			}
		})
	}
}

// TestIfNodeFailedLeavesTheObservationAlone: the imagined failure is a
// copy; the caller's replicas and targets are not rewritten.
func TestIfNodeFailedLeavesTheObservationAlone(t *testing.T) {
	g := NewWithT(t)
	o := outlookObservation(s3gwv1alpha1.S3GWRemediationSpec{}, runningTarget(fixture.NodeName, "worker-2"))
	IfNodeFailed(o)
	g.Expect(o.Targets[0].Volumes[0].Replicas[0].Host).To(Equal(fixture.ReachableNode()))
	g.Expect(o.Targets[0].Volumes[0].Attachments).To(BeEmpty())
	g.Expect(o.Targets[0].Recorded).To(BeFalse())
	g.Expect(o.Spec.Fencing.OutOfServiceTaint).To(BeNil())
}
