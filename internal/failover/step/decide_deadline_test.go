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
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

// TestDecideReleaseDeadline: once the gate opened longer than
// spec.releaseTimeout ago, whatever still holds a pod or a volume is
// reported as Succeeded=False, named exactly; before that it is waited for.
func TestDecideReleaseDeadline(t *testing.T) {
	heldPod := func(o *failover.State) {
		o.Targets[0].ForceDeleted = true
		o.Targets[0].Finalizers = []string{"example.com/backup"}
	}
	tests := []struct {
		name    string
		mutate  []func(o *failover.State)
		phase   s3gwv1alpha1.Phase
		reason  string
		message []string
	}{
		{
			name:   "a pod held by a finalizer, within the deadline",
			mutate: []func(o *failover.State){heldPod},
			phase:  s3gwv1alpha1.PhaseEvicting,
			reason: s3gwv1alpha1.ReasonRemediationStarted,
		},
		{
			name:    "a pod held by a finalizer, past the deadline",
			mutate:  []func(o *failover.State){heldPod, fixture.PastReleaseDeadline},
			phase:   s3gwv1alpha1.PhaseFailed,
			reason:  s3gwv1alpha1.ReasonEvictionTimedOut,
			message: []string{"Not done 2m0s after the gate opened: pod s3gw/s3gw-0 is kept by finalizers example.com/backup"},
		},
		{
			name: "a longhorn-api ticket, past a custom deadline",
			mutate: []func(o *failover.State){fixture.Evicted, func(o *failover.State) {
				o.Spec.ReleaseTimeout = &metav1.Duration{Duration: 30 * time.Second}
				o.FencedSince = fixture.PtrTime(fixture.Now.Add(-31 * time.Second))
				v := &o.Targets[0].Volumes[0]
				v.Attachments, v.InUseOnNode = nil, false
				v.Tickets = []failover.Ticket{{ID: "longhorn-ui", Type: "longhorn-api"}}
			}},
			phase:   s3gwv1alpha1.PhaseFailed,
			reason:  s3gwv1alpha1.ReasonReleaseTimedOut,
			message: []string{"Not done 30s after the gate opened: volume pvc-a is kept attached by Longhorn ticket longhorn-ui (type longhorn-api)"},
		},
		{
			name: "a VolumeAttachment whose deletion the external-attacher holds, past the deadline",
			mutate: []func(o *failover.State){fixture.Evicted, fixture.PastReleaseDeadline, fixture.Strategy(s3gwv1alpha1.ReleaseDeleteVolumeAttachment), func(o *failover.State) {
				o.Targets[0].Volumes[0].Attachments = []failover.Attachment{{Name: "csi-a", Deleting: true,
					Finalizers: []string{"external-attacher/driver-longhorn-io"}}}
				o.Targets[0].Volumes[0].Tickets = []failover.Ticket{{ID: "csi-a", Type: "csi-attacher"}}
			}},
			phase:  s3gwv1alpha1.PhaseFailed,
			reason: s3gwv1alpha1.ReasonReleaseTimedOut,
			message: []string{"VolumeAttachment csi-a being deleted, kept by finalizers external-attacher/driver-longhorn-io",
				"Longhorn ticket csi-a (type csi-attacher)", "node worker-1's status.volumesInUse"},
		},
		{
			name:   "released and waiting for the replacement: the replacement timeout applies, not this one",
			mutate: []func(o *failover.State){fixture.Moved, fixture.PastReleaseDeadline, func(o *failover.State) { o.Targets[0].Replacement = nil }},
			phase:  s3gwv1alpha1.PhaseWaitingForReplacement,
			reason: s3gwv1alpha1.ReasonRemediationStarted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.Fenced()
			for _, m := range tt.mutate {
				m(&o)
			}

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(tt.phase))
			succeeded := meta.FindStatusCondition(Conditions(o, d), s3gwv1alpha1.ConditionSucceeded)
			g.Expect(succeeded).NotTo(BeNil())
			g.Expect(succeeded.Reason).To(Equal(tt.reason))
			for _, m := range tt.message {
				g.Expect(succeeded.Message).To(ContainSubstring(m))
			}
			if tt.phase == s3gwv1alpha1.PhaseFailed {
				g.Expect(succeeded.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(d.Wait).To(Equal(WaitAfterFailure))
			}
		})
	}
}

func TestDecideWorkloadSelector(t *testing.T) {
	t.Run("an invalid selector fails the remediation, terminally, and finds nothing", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.Fenced()
		o.Targets, o.SelectorError = nil, `invalid workloadSelector: key: Invalid value: "-bad"`
		d := Decide(o)
		g.Expect(d.Phase).To(Equal(s3gwv1alpha1.PhaseFailed))
		g.Expect(d.Destructive()).To(BeFalse())
		expectConditions(g, Conditions(o, d),
			cond{s3gwv1alpha1.ConditionSucceeded, metav1.ConditionFalse, s3gwv1alpha1.ReasonInvalidWorkloadSelector},
			cond{s3gwv1alpha1.ConditionWorkloadSelectorValid, metav1.ConditionFalse, s3gwv1alpha1.ReasonInvalidWorkloadSelector})
	})
	t.Run("protected pods are named, and the other targets still move", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.Fenced()
		o.RefusedPods = []string{"kube-system/kube-proxy-x (owned by DaemonSet kube-proxy)"}
		d := Decide(o)
		g.Expect(evictedBy(d)).To(HaveLen(1))
		c := meta.FindStatusCondition(Conditions(o, d), s3gwv1alpha1.ConditionWorkloadSelectorValid)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonSelectsProtectedPods))
		g.Expect(c.Message).To(ContainSubstring("kube-system/kube-proxy-x (owned by DaemonSet kube-proxy)"))
	})
	t.Run("a selector matching only movable pods is valid", func(t *testing.T) {
		g := NewWithT(t)
		o := fixture.Fenced()
		d := Decide(o)
		expectConditions(g, Conditions(o, d),
			cond{s3gwv1alpha1.ConditionWorkloadSelectorValid, metav1.ConditionTrue, s3gwv1alpha1.ReasonWorkloadSelectorValid})
	})
}

// TestDecideStrandedReplicas: a replica Longhorn cannot reach may hold
// writes the old engine acknowledged while cut off from the others; by
// default nothing is evicted or released while one exists, whatever the
// evidence.
func TestDecideStrandedReplicas(t *testing.T) {
	onFailedNode := func(o *failover.State) {
		v := &o.Targets[0].Volumes[0]
		v.Replicas = append(v.Replicas, fixture.ReplicaOn(v.LonghornVolume, fixture.NodeName))
	}
	onDownNode := func(o *failover.State) {
		v := &o.Targets[0].Volumes[0]
		down := fixture.ReplicaOn(v.LonghornVolume, "worker-3")
		down.Host = fixture.DownNode()
		v.Replicas = append(v.Replicas, down)
	}
	tests := []struct {
		name    string
		mutate  []func(o *failover.State)
		phase   s3gwv1alpha1.Phase
		evicts  bool
		message string
	}{
		{"a replica on the fenced node holds the release", []func(*failover.State){onFailedNode},
			s3gwv1alpha1.PhaseWaitingForStorage, false, "replica pvc-a-r-worker-1 of pvc-a is on the failed node"},
		{"a replica on another down node holds the release", []func(*failover.State){onDownNode},
			s3gwv1alpha1.PhaseWaitingForStorage, false, "replica pvc-a-r-worker-3 of pvc-a is on node worker-3, which longhorn-manager cannot reach"},
		{"past the release deadline it fails, so NHC can escalate", []func(*failover.State){onFailedNode, fixture.PastReleaseDeadline},
			s3gwv1alpha1.PhaseFailed, false, "may have writes the others lack"},
		{"requireReachableReplicas: false releases on fencing evidence anyway", []func(*failover.State){onFailedNode,
			func(o *failover.State) { o.Spec.Release.RequireReachableReplicas = ptr.To(false) }},
			s3gwv1alpha1.PhaseEvicting, true, ""},
		{"an already released volume's replicas do not matter", []func(*failover.State){onFailedNode, fixture.Evicted,
			func(o *failover.State) { o.Targets[0].Volumes[0] = fixture.ReleasedVolume("a") }},
			s3gwv1alpha1.PhaseWaitingForReplacement, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			o := fixture.FencedByFAR()
			for _, m := range tt.mutate {
				m(&o)
			}

			d := Decide(o)

			g.Expect(d.Phase).To(Equal(tt.phase))
			g.Expect(evictedBy(d) != nil).To(Equal(tt.evicts))
			if tt.message != "" {
				c := meta.FindStatusCondition(Conditions(o, d), s3gwv1alpha1.ConditionSucceeded)
				g.Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonReplicasUnreachable))
				g.Expect(c.Message).To(ContainSubstring(tt.message))
			}
		})
	}
}
