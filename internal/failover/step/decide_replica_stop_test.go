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
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

// The release in two steps: Longhorn's ticket first, the Kubernetes release
// once each replica's own instance manager shows it stopped.
func TestDecideReplicaStops(t *testing.T) {
	// instanceManagers replaces the first replica's node's instance managers.
	instanceManagers := func(ims ...failover.InstanceManager) func(o *failover.State) {
		return func(o *failover.State) { o.Targets[0].Volumes[0].Replicas[0].Host.InstanceManagers = ims }
	}
	replica := "pvc-a-r-worker-2"
	running := func(processes map[string]string) failover.InstanceManager {
		return failover.InstanceManager{Name: "instance-manager-0", State: "running", Replicas: processes}
	}
	inLonghorn := func(o *failover.State) { o.Targets[0].Volumes = []failover.Volume{fixture.AttachedInLonghorn("a")} }
	replicaOnFailedNode := func(o *failover.State) {
		v := &o.Targets[0].Volumes[0]
		v.Replicas = append(v.Replicas, fixture.ReplicaOn(v.LonghornVolume, fixture.NodeName))
	}
	delegate := func(cr failover.RemediatorCR) func(o *failover.State) {
		return func(o *failover.State) { o.Evidence.Delegate = &cr }
	}
	tests := []struct {
		name    string
		obs     func() failover.State
		mutate  []func(o *failover.State)
		writes  writes
		hold    bool
		message []string
		phase   s3gwv1alpha1.Phase
		// holdReason is the hold's reason; ReplicaStopUnconfirmed if unset.
		holdReason string
	}{
		{
			name:   "the csi-attacher ticket goes first; the Kubernetes attachment stays as the hold",
			obs:    fixture.Fenced,
			mutate: []func(*failover.State){fixture.Evicted, inLonghorn},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
		},
		{
			name:   "the pod stays while Longhorn's ticket goes first: it is the hold no timer ends",
			obs:    fixture.Fenced,
			mutate: []func(*failover.State){inLonghorn},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:    "the pod stays until the replicas' stops are confirmed",
			obs:     fixture.Fenced,
			mutate:  []func(*failover.State){instanceManagers(running(map[string]string{replica: "running"}))},
			hold:    true,
			message: []string{"still lists replica pvc-a-r-worker-2 running"},
			phase:   s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "then the pod is force-deleted, and released on the next pass",
			obs:    fixture.Fenced,
			writes: writes{Evict: []string{"s3gw-0"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "a pod a live kubelet still runs is left to it, and so is Longhorn's ticket",
			obs:    fixture.Fenced,
			mutate: []func(*failover.State){inLonghorn, fixture.AliveKubelet},
			phase:  s3gwv1alpha1.PhaseEvicting,
			hold:   false,
		},
		{
			name:    "the ticket is gone but the replica's instance manager still lists it running",
			obs:     fixture.Fenced,
			mutate:  []func(*failover.State){fixture.Evicted, instanceManagers(running(map[string]string{replica: "running"}))},
			hold:    true,
			message: []string{"instance manager instance-manager-0 on worker-2 still lists replica pvc-a-r-worker-2 running"},
		},
		{
			name:    "a replica listed stopping may still write",
			obs:     fixture.Fenced,
			mutate:  []func(*failover.State){fixture.Evicted, instanceManagers(running(map[string]string{replica: "stopping"}))},
			hold:    true,
			message: []string{"still lists replica pvc-a-r-worker-2 stopping"},
		},
		{
			name:   "a replica listed stopped is stopped",
			obs:    fixture.Fenced,
			mutate: []func(*failover.State){fixture.Evicted, instanceManagers(running(map[string]string{replica: "stopped"}))},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "an instance manager Longhorn counts down keeps a list nobody can verify",
			obs:  fixture.Fenced,
			mutate: []func(*failover.State){fixture.Evicted, instanceManagers(running(nil),
				failover.InstanceManager{Name: "instance-manager-1", State: "unknown"})},
			hold:    true,
			message: []string{"instance manager instance-manager-1 on worker-2 is unknown"},
		},
		{
			name:    "no running instance manager on the node confirms anything",
			obs:     fixture.Fenced,
			mutate:  []func(*failover.State){fixture.Evicted, instanceManagers(failover.InstanceManager{Name: "instance-manager-0", State: "starting"})},
			hold:    true,
			message: []string{"no running instance manager on worker-2 confirms replica pvc-a-r-worker-2 stopped"},
		},
		{
			name:    "no instance manager at all",
			obs:     fixture.Fenced,
			mutate:  []func(*failover.State){fixture.Evicted, instanceManagers()},
			hold:    true,
			message: []string{"no running instance manager on worker-2"},
		},
		{
			name: "an instance manager that stopped took its processes with it; a running one confirms",
			obs:  fixture.Fenced,
			mutate: []func(*failover.State){fixture.Evicted, instanceManagers(failover.InstanceManager{Name: "instance-manager-old", State: "error"},
				running(nil))},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "a replica on the failed node is the gate's, not the instance manager's",
			obs:  fixture.Fenced,
			mutate: []func(*failover.State){fixture.Evicted, func(o *failover.State) {
				o.Spec.Release.RequireReachableReplicas = ptr.To(false)
				v := &o.Targets[0].Volumes[0]
				v.Replicas = append(v.Replicas, failover.Replica{Name: "pvc-a-r-failed", Node: fixture.NodeName, Healthy: true})
			}},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "requireReachableReplicas false releases at once, as before",
			obs:  fixture.Fenced,
			mutate: []func(*failover.State){fixture.Evicted, inLonghorn, func(o *failover.State) {
				o.Spec.Release.RequireReachableReplicas = ptr.To(false)
			}},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name:   "fencing Disabled releases at once, as before",
			obs:    fixture.NotFenced,
			mutate: []func(*failover.State){fixture.Evicted, inLonghorn, func(o *failover.State) { o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled }},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "another requester's ticket on the node stays; the stop waits for it",
			obs:  fixture.Fenced,
			mutate: []func(*failover.State){fixture.Evicted, inLonghorn, func(o *failover.State) {
				o.Targets[0].Volumes[0].Tickets = []failover.Ticket{{ID: "longhorn-ui", Type: "longhorn-api"}}
			}},
			hold:    true,
			message: []string{"still lists replica pvc-a-r-worker-2 running"},
		},
		{
			name: "the out-of-service taint releases every volume: it waits for all of them",
			obs:  fixture.FencedByFAR,
			mutate: []func(*failover.State){fixture.Evicted, fixture.Strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *failover.State) {
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, fixture.AttachedInLonghorn("b"))
			}},
			writes: writes{RemoveTickets: []string{"pvc-b"}},
		},
		{
			name:   "storage isolation alone: while a fencer is at work, Longhorn's ticket stays",
			obs:    fixture.FencedByIsolation,
			mutate: []func(*failover.State){inLonghorn, delegate(failover.RemediatorCR{Kind: fixture.FARKind, Name: "far-1"})},
			phase:  s3gwv1alpha1.PhaseEvicting,
			hold:   true, holdReason: s3gwv1alpha1.ReasonFencerAtWork,
			message: []string{"Storage isolation proves node worker-1 fenced, but FenceAgentsRemediation far-1 is still fencing it"},
		},
		{
			name: "storage isolation alone: a delegate not created is not waited for (it is created only behind a closed gate)",
			obs:  fixture.FencedByIsolation,
			mutate: []func(*failover.State){inLonghorn, func(o *failover.State) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name: "storage isolation alone: a delegate that cannot be created is not waited for",
			obs:  fixture.FencedByIsolation,
			mutate: []func(*failover.State){inLonghorn, func(o *failover.State) {
				o.Spec.Fencing.Delegate = farDelegate()
				o.Evidence.DelegateError = "template far not found"
			}},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "storage isolation alone: a fencer that gave up is not waited for",
			obs:    fixture.FencedByIsolation,
			mutate: []func(*failover.State){inLonghorn, delegate(failover.RemediatorCR{Kind: fixture.FARKind, Name: "far-1", Failure: "agent failed"})},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "storage isolation alone, no fencer: the ticket goes at once",
			obs:    fixture.FencedByIsolation,
			mutate: []func(*failover.State){inLonghorn},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "a taint that proves shutdown: the old engine is off, nothing to wait for",
			obs:    fixture.Fenced,
			mutate: []func(*failover.State){inLonghorn, delegate(failover.RemediatorCR{Kind: fixture.FARKind, Name: "far-1"})},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name: "the gate closed after the detach: no delegate while a replica's stop is unconfirmed",
			obs:  fixture.NotFenced,
			mutate: []func(*failover.State){instanceManagers(running(map[string]string{replica: "running"})), func(o *failover.State) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			phase: s3gwv1alpha1.PhaseWaitingForFencing,
			hold:  true,
			message: []string{"no fencer is started while a replica Longhorn detached is not proven stopped",
				"still lists replica pvc-a-r-worker-2 running"},
		},
		{
			name: "the gate closed after the detach and the replica stopped: the delegate is created",
			obs:  fixture.NotFenced,
			mutate: []func(*failover.State){func(o *failover.State) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			writes: writes{CreateDelegate: true},
			phase:  s3gwv1alpha1.PhaseWaitingForFencing,
			hold:   true, holdReason: s3gwv1alpha1.ReasonWaitingForFencing,
		},
		{
			name: "a replica on the failed node: no delegate, whose fencer's release would leave it behind",
			obs:  fixture.NotFenced,
			mutate: []func(*failover.State){inLonghorn, replicaOnFailedNode, func(o *failover.State) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			phase: s3gwv1alpha1.PhaseWaitingForFencing,
			hold:  true, holdReason: s3gwv1alpha1.ReasonReplicasUnreachable,
			message: []string{"no fencer is started while a replica Longhorn cannot reach may have writes the others lack",
				"replica pvc-a-r-worker-1 of pvc-a is on the failed node"},
		},
		{
			name: "a replica on the failed node with requireReachableReplicas false: the delegate is created",
			obs:  fixture.NotFenced,
			mutate: []func(*failover.State){inLonghorn, replicaOnFailedNode, func(o *failover.State) {
				o.Spec.Fencing.Delegate = farDelegate()
				o.Spec.Release.RequireReachableReplicas = ptr.To(false)
			}},
			writes: writes{CreateDelegate: true},
			phase:  s3gwv1alpha1.PhaseWaitingForFencing,
			hold:   true, holdReason: s3gwv1alpha1.ReasonWaitingForFencing,
		},
		{
			name: "before the detach the delegate is created as before",
			obs:  fixture.NotFenced,
			mutate: []func(*failover.State){inLonghorn, func(o *failover.State) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			writes: writes{CreateDelegate: true},
			phase:  s3gwv1alpha1.PhaseWaitingForFencing,
			hold:   true, holdReason: s3gwv1alpha1.ReasonWaitingForFencing,
		},
		{
			name:    "past the deadline the unconfirmed stops are named",
			obs:     fixture.Fenced,
			mutate:  []func(*failover.State){fixture.Evicted, fixture.PastReleaseDeadline, instanceManagers(running(map[string]string{replica: "running"}))},
			phase:   s3gwv1alpha1.PhaseFailed,
			message: []string{"unconfirmed replica stops (instance manager instance-manager-0 on worker-2 still lists replica pvc-a-r-worker-2 running)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := tt.obs()
			for _, m := range tt.mutate {
				m(&o)
			}

			d := Decide(o)

			g.Expect(writesOf(d)).To(Equal(tt.writes))
			phase := tt.phase
			if phase == "" {
				phase = s3gwv1alpha1.PhaseReleasing
			}
			g.Expect(d.Phase).To(Equal(phase))
			reason := tt.holdReason
			if reason == "" {
				reason = s3gwv1alpha1.ReasonReplicaStopUnconfirmed
			}
			held := false
			for _, h := range d.Blocks {
				held = held || h.Reason == reason
			}
			g.Expect(held).To(Equal(tt.hold))
			for _, m := range tt.message {
				g.Expect(d.Message).To(ContainSubstring(m))
			}
		})
	}
}
