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
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// The release in two steps: Longhorn's ticket first, the Kubernetes release
// once each replica's own instance manager shows it stopped.
func TestDecideReplicaStops(t *testing.T) {
	// instanceManagers replaces the first replica's node's instance managers.
	instanceManagers := func(ims ...InstanceManager) func(o *Observation) {
		return func(o *Observation) { o.Targets[0].Volumes[0].Replicas[0].Host.InstanceManagers = ims }
	}
	replica := "pvc-a-r-worker-2"
	running := func(processes map[string]string) InstanceManager {
		return InstanceManager{Name: "instance-manager-0", State: "running", Replicas: processes}
	}
	inLonghorn := func(o *Observation) { o.Targets[0].Volumes = []Volume{attachedInLonghorn("a")} }
	delegate := func(cr RemediatorCR) func(o *Observation) {
		return func(o *Observation) { o.Evidence.Delegate = &cr }
	}
	tests := []struct {
		name    string
		obs     func() Observation
		mutate  []func(o *Observation)
		writes  writes
		hold    bool
		message []string
		phase   s3gwv1alpha1.Phase
		// holdReason is the hold's reason; ReplicaStopUnconfirmed if unset.
		holdReason string
	}{
		{
			name:   "the csi-attacher ticket goes first; the Kubernetes attachment stays as the hold",
			obs:    fenced,
			mutate: []func(*Observation){evicted, inLonghorn},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
		},
		{
			name:   "the pod stays while Longhorn's ticket goes first: it is the hold no timer ends",
			obs:    fenced,
			mutate: []func(*Observation){inLonghorn},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:    "the pod stays until the replicas' stops are confirmed",
			obs:     fenced,
			mutate:  []func(*Observation){instanceManagers(running(map[string]string{replica: "running"}))},
			hold:    true,
			message: []string{"still lists replica pvc-a-r-worker-2 running"},
			phase:   s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "then the pod is force-deleted, and released on the next pass",
			obs:    fenced,
			writes: writes{Evict: []string{"s3gw-0"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "a pod a live kubelet still runs is left to it, and so is Longhorn's ticket",
			obs:    fenced,
			mutate: []func(*Observation){inLonghorn, aliveKubelet},
			phase:  s3gwv1alpha1.PhaseEvicting,
			hold:   false,
		},
		{
			name:    "the ticket is gone but the replica's instance manager still lists it running",
			obs:     fenced,
			mutate:  []func(*Observation){evicted, instanceManagers(running(map[string]string{replica: "running"}))},
			hold:    true,
			message: []string{"instance manager instance-manager-0 on worker-2 still lists replica pvc-a-r-worker-2 running"},
		},
		{
			name:    "a replica listed stopping may still write",
			obs:     fenced,
			mutate:  []func(*Observation){evicted, instanceManagers(running(map[string]string{replica: "stopping"}))},
			hold:    true,
			message: []string{"still lists replica pvc-a-r-worker-2 stopping"},
		},
		{
			name:   "a replica listed stopped is stopped",
			obs:    fenced,
			mutate: []func(*Observation){evicted, instanceManagers(running(map[string]string{replica: "stopped"}))},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "an instance manager Longhorn counts down keeps a list nobody can verify",
			obs:  fenced,
			mutate: []func(*Observation){evicted, instanceManagers(running(nil),
				InstanceManager{Name: "instance-manager-1", State: "unknown"})},
			hold:    true,
			message: []string{"instance manager instance-manager-1 on worker-2 is unknown"},
		},
		{
			name:    "no running instance manager on the node confirms anything",
			obs:     fenced,
			mutate:  []func(*Observation){evicted, instanceManagers(InstanceManager{Name: "instance-manager-0", State: "starting"})},
			hold:    true,
			message: []string{"no running instance manager on worker-2 confirms replica pvc-a-r-worker-2 stopped"},
		},
		{
			name:    "no instance manager at all",
			obs:     fenced,
			mutate:  []func(*Observation){evicted, instanceManagers()},
			hold:    true,
			message: []string{"no running instance manager on worker-2"},
		},
		{
			name: "an instance manager that stopped took its processes with it; a running one confirms",
			obs:  fenced,
			mutate: []func(*Observation){evicted, instanceManagers(InstanceManager{Name: "instance-manager-old", State: "error"},
				running(nil))},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "a replica on the failed node is the gate's, not the instance manager's",
			obs:  fenced,
			mutate: []func(*Observation){evicted, func(o *Observation) {
				o.Spec.Release.RequireReachableReplicas = ptr.To(false)
				v := &o.Targets[0].Volumes[0]
				v.Replicas = append(v.Replicas, Replica{Name: "pvc-a-r-failed", Node: testNode, Healthy: true})
			}},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "requireReachableReplicas false releases at once, as before",
			obs:  fenced,
			mutate: []func(*Observation){evicted, inLonghorn, func(o *Observation) {
				o.Spec.Release.RequireReachableReplicas = ptr.To(false)
			}},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name:   "fencing Disabled releases at once, as before",
			obs:    notFenced,
			mutate: []func(*Observation){evicted, inLonghorn, func(o *Observation) { o.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled }},
			writes: writes{UnmarkInUse: []string{"pvc-a"}},
		},
		{
			name: "another requester's ticket on the node stays; the stop waits for it",
			obs:  fenced,
			mutate: []func(*Observation){evicted, inLonghorn, func(o *Observation) {
				o.Targets[0].Volumes[0].Tickets = []Ticket{{ID: "longhorn-ui", Type: "longhorn-api"}}
			}},
			hold:    true,
			message: []string{"still lists replica pvc-a-r-worker-2 running"},
		},
		{
			name: "the out-of-service taint releases every volume: it waits for all of them",
			obs:  fencedByFAR,
			mutate: []func(*Observation){evicted, strategy(s3gwv1alpha1.ReleaseOutOfServiceTaint), func(o *Observation) {
				o.Targets[0].Volumes = append(o.Targets[0].Volumes, attachedInLonghorn("b"))
			}},
			writes: writes{RemoveTickets: []string{"pvc-b"}},
		},
		{
			name:   "storage isolation alone: while a fencer is at work, Longhorn's ticket stays",
			obs:    fencedByIsolation,
			mutate: []func(*Observation){inLonghorn, delegate(RemediatorCR{Kind: farKind, Name: "far-1"})},
			phase:  s3gwv1alpha1.PhaseEvicting,
			hold:   true, holdReason: s3gwv1alpha1.ReasonFencerAtWork,
			message: []string{"Storage isolation holds for node worker-1, but FenceAgentsRemediation far-1 is still fencing it"},
		},
		{
			name: "storage isolation alone: a delegate not created is not waited for (it is created only behind a closed gate)",
			obs:  fencedByIsolation,
			mutate: []func(*Observation){inLonghorn, func(o *Observation) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name: "storage isolation alone: a delegate that cannot be created is not waited for",
			obs:  fencedByIsolation,
			mutate: []func(*Observation){inLonghorn, func(o *Observation) {
				o.Spec.Fencing.Delegate = farDelegate()
				o.Evidence.DelegateError = "template far not found"
			}},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "storage isolation alone: a fencer that gave up is not waited for",
			obs:    fencedByIsolation,
			mutate: []func(*Observation){inLonghorn, delegate(RemediatorCR{Kind: farKind, Name: "far-1", Failure: "agent failed"})},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "storage isolation alone, no fencer: the ticket goes at once",
			obs:    fencedByIsolation,
			mutate: []func(*Observation){inLonghorn},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name:   "a taint that proves shutdown: the old engine is off, nothing to wait for",
			obs:    fenced,
			mutate: []func(*Observation){inLonghorn, delegate(RemediatorCR{Kind: farKind, Name: "far-1"})},
			writes: writes{RemoveTickets: []string{"pvc-a"}},
			phase:  s3gwv1alpha1.PhaseEvicting,
		},
		{
			name: "the gate closed after the detach: no delegate while a replica's stop is unconfirmed",
			obs:  notFenced,
			mutate: []func(*Observation){instanceManagers(running(map[string]string{replica: "running"})), func(o *Observation) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			phase: s3gwv1alpha1.PhaseWaitingForFencing,
			hold:  true,
			message: []string{"no delegate is created while a replica Longhorn detached may hold the last writes alone",
				"still lists replica pvc-a-r-worker-2 running"},
		},
		{
			name: "the gate closed after the detach and the replica stopped: the delegate is created",
			obs:  notFenced,
			mutate: []func(*Observation){func(o *Observation) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			writes: writes{CreateDelegate: true},
			phase:  s3gwv1alpha1.PhaseWaitingForFencing,
			hold:   true, holdReason: s3gwv1alpha1.ReasonWaitingForFencing,
		},
		{
			name: "before the detach the delegate is created as before",
			obs:  notFenced,
			mutate: []func(*Observation){inLonghorn, func(o *Observation) {
				o.Spec.Fencing.Delegate = farDelegate()
			}},
			writes: writes{CreateDelegate: true},
			phase:  s3gwv1alpha1.PhaseWaitingForFencing,
			hold:   true, holdReason: s3gwv1alpha1.ReasonWaitingForFencing,
		},
		{
			name:    "past the deadline the unconfirmed stops are named",
			obs:     fenced,
			mutate:  []func(*Observation){evicted, pastReleaseDeadline, instanceManagers(running(map[string]string{replica: "running"}))},
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
			for _, h := range d.Holds {
				held = held || h.Reason == reason
			}
			g.Expect(held).To(Equal(tt.hold))
			for _, m := range tt.message {
				g.Expect(d.Message).To(ContainSubstring(m))
			}
		})
	}
}
