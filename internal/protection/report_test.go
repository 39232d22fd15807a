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

package protection

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
)

var (
	template = types.NamespacedName{Namespace: "s3gw-remediation-system", Name: "s3gw"}
	now      = time.Date(2026, time.March, 4, 12, 0, 0, 0, time.UTC)
	// reachable is a node longhorn-manager reaches at now, with a running
	// instance manager.
	reachable = failover.ReplicaNode{Longhorn: failover.LonghornNode{Found: true, Status: failover.ReadyTrue},
		Heartbeat:        failover.Heartbeat{LeaseRenewed: now, LeaseDuration: 40 * time.Second},
		InstanceManagers: []failover.InstanceManager{{Name: "instance-manager", State: "running"}}}
	pool = map[string]string{"pool": "s3gw"}
)

func templateRef() map[string]any {
	return map[string]any{"apiVersion": "s3gw-remediation.medik8s.io/v1alpha1", "kind": "S3GWRemediationTemplate",
		"namespace": template.Namespace, "name": template.Name}
}

func farTemplateRef() map[string]any {
	return map[string]any{"apiVersion": "fence-agents-remediation.medik8s.io/v1alpha1", "kind": "FenceAgentsRemediationTemplate",
		"namespace": template.Namespace, "name": "far"}
}

func nodeHealthCheck(name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(NodeHealthCheckGVK)
	u.SetName(name)
	return u
}

func readyUnknownFor(d string) []any {
	return []any{
		map[string]any{"type": "Ready", "status": "False", "duration": "10m"},
		map[string]any{"type": "Ready", "status": "Unknown", "duration": d},
	}
}

func TestReferencingHealthCheck(t *testing.T) {
	selector := map[string]any{"matchLabels": map[string]any{"pool": "s3gw"}}
	tests := []struct {
		name       string
		spec       map[string]any
		status     map[string]any
		referenced bool
		want       HealthCheck
	}{
		{name: "classic remediationTemplate",
			spec:       map[string]any{"selector": selector, "unhealthyConditions": readyUnknownFor("60s"), "remediationTemplate": templateRef()},
			referenced: true, want: HealthCheck{Name: "nhc", NoticesLostNode: true, NoticedAfter: time.Minute}},
		{name: "third escalation step: the earlier steps' timeouts come first",
			spec: map[string]any{"selector": selector, "unhealthyConditions": readyUnknownFor("300s"),
				"escalatingRemediations": []any{
					map[string]any{"remediationTemplate": templateRef(), "order": int64(3), "timeout": "5m"},
					map[string]any{"remediationTemplate": farTemplateRef(), "order": int64(1), "timeout": "2m"},
					map[string]any{"remediationTemplate": farTemplateRef(), "order": int64(2), "timeout": "90s"},
				}},
			referenced: true, want: HealthCheck{Name: "nhc", NoticesLostNode: true, NoticedAfter: 300 * time.Second,
				StepDelay: 3*time.Minute + 30*time.Second}},
		{name: "unhealthy conditions left out: NHC's defaults",
			spec:       map[string]any{"selector": selector, "remediationTemplate": templateRef()},
			referenced: true, want: HealthCheck{Name: "nhc", NoticesLostNode: true, NoticedAfter: DefaultUnhealthyDuration}},
		{name: "only Ready=False: a node that stops reporting is never remediated",
			spec: map[string]any{"selector": selector, "remediationTemplate": templateRef(),
				"unhealthyConditions": []any{map[string]any{"type": "Ready", "status": "False", "duration": "60s"}}},
			referenced: true, want: HealthCheck{Name: "nhc"}},
		{name: "paused",
			spec: map[string]any{"selector": selector, "unhealthyConditions": readyUnknownFor("60s"), "remediationTemplate": templateRef(),
				"pauseRequests": []any{"maintenance"}},
			referenced: true, want: HealthCheck{Name: "nhc", Paused: true, NoticesLostNode: true, NoticedAfter: time.Minute}},
		{name: "another template only",
			spec:       map[string]any{"selector": selector, "remediationTemplate": farTemplateRef()},
			referenced: false},
		{name: "disabled: NHC's status.phase Disabled (its template is missing)",
			spec: map[string]any{"selector": selector, "unhealthyConditions": readyUnknownFor("60s"), "remediationTemplate": templateRef()},
			status: map[string]any{"phase": "Disabled",
				"reason": "NHC is disabled: RemediationTemplateNotFound: Remediation template not found"},
			referenced: true, want: HealthCheck{Name: "nhc", Disabled: true, NoticesLostNode: true, NoticedAfter: time.Minute,
				DisabledReason: "NHC is disabled: RemediationTemplateNotFound: Remediation template not found"}},
		{name: "enabled again: only the phase counts",
			spec:       map[string]any{"selector": selector, "unhealthyConditions": readyUnknownFor("60s"), "remediationTemplate": templateRef()},
			status:     map[string]any{"phase": "Enabled", "reason": "NHC is enabled, no ongoing remediation"},
			referenced: true, want: HealthCheck{Name: "nhc", NoticesLostNode: true, NoticedAfter: time.Minute}},
		{name: "a template of the same name in another namespace",
			spec: map[string]any{"selector": selector, "remediationTemplate": map[string]any{
				"apiVersion": "s3gw-remediation.medik8s.io/v1alpha1", "kind": "S3GWRemediationTemplate", "namespace": "other", "name": "s3gw"}},
			referenced: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := nodeHealthCheck("nhc", tt.spec)
			if tt.status != nil {
				obj.Object["status"] = tt.status
			}
			h, referenced, err := ReferencingHealthCheck(obj, template)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(referenced).To(Equal(tt.referenced))
			if !referenced {
				return
			}
			g.Expect(h.Selects(pool)).To(BeTrue())
			g.Expect(h.Selects(map[string]string{"pool": "other"})).To(BeFalse())
			h.Selector = nil
			g.Expect(h).To(Equal(tt.want))
		})
	}
}

func TestReferencingHealthCheckRejectsBadDurations(t *testing.T) {
	g := NewWithT(t)
	_, _, err := ReferencingHealthCheck(nodeHealthCheck("nhc", map[string]any{"remediationTemplate": templateRef(),
		"unhealthyConditions": readyUnknownFor("five minutes")}), template)
	g.Expect(err).To(MatchError(ContainSubstring(`duration "five minutes"`)))
}

func TestExpectedRTO(t *testing.T) {
	g := NewWithT(t)
	h := HealthCheck{NoticedAfter: 300 * time.Second}
	g.Expect(ExpectedRTO(DefaultNodeMonitorGracePeriod, h, "")).To(Equal(355300 * time.Millisecond))
	g.Expect(ExpectedRTO(DefaultNodeMonitorGracePeriod, h, s3gwv1alpha1.ReleaseDeleteVolumeAttachment)).To(Equal(416 * time.Second))
	h.StepDelay = time.Minute
	g.Expect(ExpectedRTO(10*time.Second, h, s3gwv1alpha1.ReleaseOutOfServiceTaint)).To(Equal(380 * time.Second))
}

// s3gwPod runs on node with one Longhorn RWO volume whose replicas are on
// replicaNodes.
func s3gwPod(name, node string, replicaNodes ...string) Pod {
	v := failover.Volume{Claim: name + "-pvc", PersistentVolume: "pv-" + name, LonghornVolume: "pvc-" + name}
	for _, n := range replicaNodes {
		v.Replicas = append(v.Replicas, failover.Replica{Name: "pvc-" + name + "-r-" + n, Node: n, Healthy: true, Host: reachable})
	}
	return Pod{Node: node, NodeLabels: pool,
		Target: failover.Target{Namespace: "s3gw", Name: name, UID: types.UID(name), Volumes: []failover.Volume{v}}}
}

func watchingPool(name string, after time.Duration) HealthCheck {
	return HealthCheck{Name: name, Selector: labels.SelectorFromSet(pool), NoticesLostNode: true, NoticedAfter: after}
}

func inputs(checks ...HealthCheck) Inputs {
	return Inputs{Now: now, LonghornAvailable: true, HealthChecksInstalled: true, HealthChecks: checks,
		NodeMonitorGracePeriod: DefaultNodeMonitorGracePeriod}
}

func TestReport(t *testing.T) {
	g := NewWithT(t)
	status := Report(inputs(watchingPool("slow", 300*time.Second), watchingPool("fast", time.Minute)), []Pod{
		s3gwPod("b", "node-b", "node-c"),
		s3gwPod("a", "node-a", "node-a", "node-c"),
	})
	g.Expect(status.Protection).To(Equal("1/2"))
	g.Expect(status.SelectedPods).To(BeEquivalentTo(2))
	g.Expect(status.ProtectedPods).To(BeEquivalentTo(1))
	g.Expect(status.NodeHealthChecks).To(Equal([]string{"fast", "slow"}))
	g.Expect(status.Pods).To(HaveLen(2))

	a, b := status.Pods[0], status.Pods[1]
	g.Expect(a.Name).To(Equal("a"), "sorted by name")
	g.Expect(a.Protected).To(BeFalse())
	g.Expect(a.Reason).To(Equal(s3gwv1alpha1.ReasonNoFencingEvidence))
	g.Expect(a.Message).To(ContainSubstring("replica pvc-a-r-node-a of pvc-a is on the node"))
	g.Expect(a.Message).To(ContainSubstring("soft anti-affinity"))
	g.Expect(a.ExpectedRTO).To(BeNil())
	g.Expect(a.Volumes).To(Equal([]s3gwv1alpha1.VolumePlacement{{ClaimName: "a-pvc", LonghornVolume: "pvc-a",
		Replicas: []string{"pvc-a-r-node-a@node-a", "pvc-a-r-node-c@node-c"}, HealthyReplicasElsewhere: 1}}))

	g.Expect(b.Protected).To(BeTrue())
	g.Expect(b.Reason).To(Equal(s3gwv1alpha1.ReasonPodProtected))
	g.Expect(b.Evidence).To(Equal([]string{evidence.EvidenceStorageIsolation}))
	g.Expect(b.NodeHealthChecks).To(Equal([]string{"slow", "fast"}))
	// The first NodeHealthCheck to fire sets the budget: 50 s + 60 s + 5.3 s.
	g.Expect(b.ExpectedRTO).To(Equal(&metav1.Duration{Duration: 115300 * time.Millisecond}))
	g.Expect(status.ExpectedRTO).To(Equal(b.ExpectedRTO))

	g.Expect(status.Conditions).To(HaveLen(1))
	c := status.Conditions[0]
	g.Expect(c.Type).To(Equal(s3gwv1alpha1.ConditionProtected))
	g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonPodsUnprotected))
	g.Expect(c.Message).To(ContainSubstring("s3gw/a (NoFencingEvidence)"))
}

func TestReportNodeHealthChecks(t *testing.T) {
	paused := watchingPool("paused", time.Minute)
	paused.Paused = true
	disabled := watchingPool("disabled", time.Minute)
	disabled.Disabled, disabled.DisabledReason = true, "NHC is disabled: RemediationTemplateNotFound: not found"
	elsewhere := watchingPool("elsewhere", time.Minute)
	elsewhere.Selector = labels.SelectorFromSet(map[string]string{"pool": "other"})
	blind := HealthCheck{Name: "blind", Selector: labels.SelectorFromSet(pool)}
	notInstalled := inputs()
	notInstalled.HealthChecksInstalled = false

	tests := []struct {
		name    string
		in      Inputs
		message string
	}{
		{"none references the template", inputs(), "no NodeHealthCheck references this template"},
		{"NodeHealthCheck is not installed", notInstalled, "NodeHealthCheck is not installed"},
		{"one selects other nodes", inputs(elsewhere), "elsewhere does not select node node-b"},
		{"one is paused", inputs(paused), "paused is paused"},
		{"one is disabled", inputs(disabled), "disabled is disabled (status.phase Disabled: NHC is disabled: RemediationTemplateNotFound"},
		{"one ignores lost nodes", inputs(blind), "blind has no unhealthy condition Ready=Unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			status := Report(tt.in, []Pod{s3gwPod("b", "node-b", "node-c")})
			g.Expect(status.Protection).To(Equal("0/1"))
			p := status.Pods[0]
			g.Expect(p.Protected).To(BeFalse())
			g.Expect(p.Reason).To(Equal(s3gwv1alpha1.ReasonNoNodeHealthCheck))
			g.Expect(p.Message).To(ContainSubstring(tt.message))
			g.Expect(p.Evidence).To(Equal([]string{evidence.EvidenceStorageIsolation}), "the evidence would hold")
			g.Expect(p.ExpectedRTO).To(BeNil())
			g.Expect(status.Conditions[0].Reason).To(Equal(s3gwv1alpha1.ReasonPodsUnprotected))
		})
	}
}

func TestReportSummary(t *testing.T) {
	g := NewWithT(t)
	all := Report(inputs(watchingPool("nhc", time.Minute)), []Pod{s3gwPod("b", "node-b", "node-c")})
	g.Expect(all.Conditions[0].Status).To(Equal(metav1.ConditionTrue))
	g.Expect(all.Conditions[0].Reason).To(Equal(s3gwv1alpha1.ReasonAllPodsProtected))
	g.Expect(all.Conditions[0].Message).To(ContainSubstring("within 1m55.3s"))

	none := Report(inputs(), nil)
	g.Expect(none.Protection).To(Equal("0/0"))
	g.Expect(none.Conditions[0].Reason).To(Equal(s3gwv1alpha1.ReasonNoPodsSelected))
	g.Expect(none.Conditions[0].Message).To(ContainSubstring("no NodeHealthCheck references this template"))

	in := inputs()
	in.SelectorError = "invalid workloadSelector: bad"
	bad := Report(in, []Pod{s3gwPod("b", "node-b", "node-c")})
	g.Expect(bad.Pods).To(BeEmpty())
	g.Expect(bad.Conditions[0].Reason).To(Equal(s3gwv1alpha1.ReasonInvalidWorkloadSelector))

	in = inputs(watchingPool("nhc", time.Minute))
	in.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
	unsafe := Report(in, []Pod{s3gwPod("a", "node-a", "node-a")})
	g.Expect(unsafe.Pods[0].Reason).To(Equal(s3gwv1alpha1.ReasonNoHealthyReplica), "no replica elsewhere fails even unfenced")
	unsafe = Report(in, []Pod{s3gwPod("a", "node-a", "node-a", "node-c")})
	g.Expect(unsafe.Pods[0].Protected).To(BeTrue())
	g.Expect(unsafe.Pods[0].Reason).To(Equal(s3gwv1alpha1.ReasonProtectedWithoutFencing))
}

func TestReportAutoSalvage(t *testing.T) {
	unfenced := inputs(watchingPool("nhc", time.Minute))
	unfenced.Spec.Fencing.Mode = s3gwv1alpha1.FencingModeDisabled
	elsewhere := inputs(watchingPool("nhc", time.Minute))
	elsewhere.Spec.Release.LonghornNamespace = "storage"
	noVolume := s3gwPod("b", "node-b")
	noVolume.Target.Volumes = nil

	tests := []struct {
		name      string
		in        Inputs
		pod       Pod
		protected bool
		// warning is the namespace the pod's message and the condition
		// name; empty when they do not warn.
		warning string
	}{
		{"protected", inputs(watchingPool("nhc", time.Minute)), s3gwPod("b", "node-b", "node-c"), true, "longhorn-system"},
		{"protected without fencing", unfenced, s3gwPod("b", "node-b", "node-b", "node-c"), true, "longhorn-system"},
		{"Longhorn elsewhere", elsewhere, s3gwPod("b", "node-b", "node-c"), true, "storage"},
		{"unprotected: its reason says what to fix", inputs(watchingPool("nhc", time.Minute)), s3gwPod("b", "node-b", "node-b", "node-c"), false, ""},
		{"protected, without a Longhorn volume", unfenced, noVolume, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			off := Report(tt.in, []Pod{tt.pod})
			in := tt.in
			in.AutoSalvage = true
			on := Report(in, []Pod{tt.pod})

			verdict := func(s s3gwv1alpha1.S3GWRemediationTemplateStatus) []any {
				p := s.Pods[0]
				return []any{s.Protection, s.ProtectedPods, s.ExpectedRTO, s.Conditions[0].Status, s.Conditions[0].Reason,
					p.Protected, p.Reason, p.ExpectedRTO, p.Evidence}
			}
			g.Expect(off.Pods[0].Protected).To(Equal(tt.protected), "%+v", off.Pods[0])
			g.Expect(verdict(on)).To(Equal(verdict(off)), "a warning changes neither the verdict nor the expected RTO")
			g.Expect(off.Pods[0].Message).NotTo(ContainSubstring("auto-salvage"))
			g.Expect(off.Conditions[0].Message).NotTo(ContainSubstring("auto-salvage"))

			pod, condition := on.Pods[0].Message, on.Conditions[0].Message
			if tt.warning == "" {
				g.Expect(pod).To(Equal(off.Pods[0].Message))
				g.Expect(condition).To(Equal(off.Conditions[0].Message))
				return
			}
			g.Expect(pod).To(HavePrefix(off.Pods[0].Message + ". "))
			g.Expect(pod).To(ContainSubstring("Warning: Longhorn's auto-salvage is on (setting auto-salvage in " + tt.warning + ")"))
			g.Expect(pod).To(ContainSubstring("Set it to false to keep such a volume faulted"))
			g.Expect(pod).To(ContainSubstring(`docs/safety.md, "7. Residual risks"`))
			g.Expect(condition).To(HavePrefix(off.Conditions[0].Message + "; "))
			g.Expect(condition).To(HaveSuffix("warning: Longhorn's auto-salvage is on (status.pods[].message)"))
		})
	}
}
