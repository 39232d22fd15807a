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
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/step"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// Pod is one pod a template selects, as observed now.
type Pod struct {
	// Node is the node it runs on, with the node's labels.
	Node       string
	NodeLabels map[string]string
	// Target is the pod as a remediation of its node would observe it:
	// namespace, name, volumes and their replicas with the reachability of
	// their nodes now.
	Target failover.Target
	// Evidence is what the evidence sources' adapters previewed for a
	// remediation of the pod's node: whether a listed remediator's kind is
	// served (InvalidRemediators), whether the delegate could be created
	// (DelegateError).
	Evidence failover.Evidence
	// Images is how warm the nodes the pod's replacement may be scheduled
	// to are (prepull.Assess); nil without spec.prePull.enabled.
	Images *s3gwv1alpha1.ImageWarmth
}

// Inputs is what the report reads beyond the pods.
type Inputs struct {
	Now  time.Time
	Spec s3gwv1alpha1.S3GWRemediationSpec
	// LonghornAvailable is false when Longhorn's CRDs are not served.
	LonghornAvailable bool
	// AutoSalvage is true when Longhorn's auto-salvage setting is on in
	// release.longhornNamespace (longhorn.State.AutoSalvage): a warning on
	// protected pods, never a reason they are not.
	AutoSalvage bool
	// HealthChecksInstalled is false when NodeHealthCheck is not served.
	HealthChecksInstalled bool
	// HealthChecks are the NodeHealthChecks that reference the template.
	HealthChecks []HealthCheck
	// NodeMonitorGracePeriod is kube-controller-manager's.
	NodeMonitorGracePeriod time.Duration
	// SelectorError says why the workload selector does not parse.
	SelectorError string
	// PrePull is the template's spec.prePull.enabled: the report then has
	// the ImagesWarm condition.
	PrePull bool
	// ImagePullEstimate is what a cold candidate node adds to the expected
	// RTO; zero means DefaultImagePullEstimate.
	ImagePullEstimate time.Duration
}

// Report is the template's protection report; its Protected condition has
// no transition time yet.
func Report(in Inputs, pods []Pod) s3gwv1alpha1.S3GWRemediationTemplateStatus {
	var status s3gwv1alpha1.S3GWRemediationTemplateStatus
	for _, h := range in.HealthChecks {
		status.NodeHealthChecks = append(status.NodeHealthChecks, h.Name)
	}
	slices.Sort(status.NodeHealthChecks)
	if in.SelectorError != "" {
		status.Protection = "0/0"
		status.Conditions = []metav1.Condition{protectedCondition(metav1.ConditionFalse, s3gwv1alpha1.ReasonInvalidWorkloadSelector, in.SelectorError)}
		return status
	}
	warned := false
	for _, p := range pods {
		report := podReport(in, p)
		warned = warned || report.Protected && autoSalvageApplies(in, p)
		status.Pods = append(status.Pods, report)
	}
	slices.SortFunc(status.Pods, func(a, b s3gwv1alpha1.PodProtection) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var unprotected []string
	for _, p := range status.Pods {
		if !p.Protected {
			unprotected = append(unprotected, fmt.Sprintf("%s/%s (%s)", p.Namespace, p.Name, p.Reason))
			continue
		}
		status.ProtectedPods++
		if p.ExpectedRTO != nil && (status.ExpectedRTO == nil || p.ExpectedRTO.Duration > status.ExpectedRTO.Duration) {
			status.ExpectedRTO = p.ExpectedRTO
		}
	}
	status.SelectedPods = int32(len(status.Pods))
	status.Protection = fmt.Sprintf("%d/%d", status.ProtectedPods, status.SelectedPods)
	status.Conditions = []metav1.Condition{summary(in, status, unprotected, warned)}
	if in.PrePull {
		status.Conditions = append(status.Conditions, imagesCondition(status.Pods))
	}
	return status
}

// summary is the Protected condition; warned says a protected pod's
// message warns of auto-salvage.
func summary(in Inputs, status s3gwv1alpha1.S3GWRemediationTemplateStatus, unprotected []string, warned bool) metav1.Condition {
	var notes []string
	if len(status.NodeHealthChecks) == 0 {
		notes = append(notes, noHealthCheck(in))
	}
	if warned {
		notes = append(notes, "warning: Longhorn's auto-salvage is on (status.pods[].message)")
	}
	note := ""
	if len(notes) > 0 {
		note = "; " + strings.Join(notes, "; ")
	}
	switch {
	case status.SelectedPods == 0:
		return protectedCondition(metav1.ConditionFalse, s3gwv1alpha1.ReasonNoPodsSelected,
			"The workload selector matches no pod on a node"+namespaces(in.Spec)+note)
	case len(unprotected) > 0:
		return protectedCondition(metav1.ConditionFalse, s3gwv1alpha1.ReasonPodsUnprotected,
			fmt.Sprintf("%d of %d s3gw pods would not move if their node failed now: %s%s",
				len(unprotected), status.SelectedPods, strings.Join(unprotected, ", "), note))
	default:
		return protectedCondition(metav1.ConditionTrue, s3gwv1alpha1.ReasonAllPodsProtected,
			fmt.Sprintf("All %d s3gw pods would move within %s if their node failed now%s", status.SelectedPods, status.ExpectedRTO.Duration, note))
	}
}

func namespaces(spec s3gwv1alpha1.S3GWRemediationSpec) string {
	if len(spec.Namespaces) == 0 {
		return ""
	}
	return " in namespaces " + strings.Join(spec.Namespaces, ", ")
}

func protectedCondition(status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: s3gwv1alpha1.ConditionProtected, Status: status, Reason: reason, Message: message}
}

// podReport evaluates one pod: would the remediation move it (the
// failover decision on the imagined failure of its node), would a
// NodeHealthCheck start that remediation, and how long would it take.
func podReport(in Inputs, p Pod) s3gwv1alpha1.PodProtection {
	out := s3gwv1alpha1.PodProtection{Namespace: p.Target.Namespace, Name: p.Target.Name, Node: p.Node,
		Volumes: placements(p, in.Now)}
	o := failover.Observation{Now: in.Now, Spec: in.Spec, Node: &failover.Node{Name: p.Node},
		Targets: []failover.Target{p.Target}, LonghornAvailable: in.LonghornAvailable,
		Evidence: p.Evidence}
	outlook := step.IfNodeFailed(o)
	out.Evidence = outlook.Evidence

	checks, why := watching(in, p)
	for _, h := range checks {
		out.NodeHealthChecks = append(out.NodeHealthChecks, h.Name)
		rto := ExpectedRTO(in.NodeMonitorGracePeriod, h, in.Spec.Release.Strategy)
		if out.ExpectedRTO == nil || rto < out.ExpectedRTO.Duration {
			out.ExpectedRTO = &metav1.Duration{Duration: rto}
		}
	}
	out.Images = p.Images
	if out.ExpectedRTO != nil {
		out.ExpectedRTO.Duration += pullDelay(in, p.Images)
	}
	switch {
	case !outlook.FailsOver:
		out.Reason, out.Message = outlook.Reason, outlook.Message+". "+fix(outlook.Reason, p.Node)
		if len(checks) == 0 {
			out.Message += " Also: " + why
		}
		out.ExpectedRTO = nil
	case len(checks) == 0:
		out.Reason, out.Message = s3gwv1alpha1.ReasonNoNodeHealthCheck, why+". "+fix(s3gwv1alpha1.ReasonNoNodeHealthCheck, p.Node)
	case slices.Contains(outlook.Evidence, evidence.EvidenceFencingDisabled):
		out.Protected, out.Reason = true, s3gwv1alpha1.ReasonProtectedWithoutFencing
		out.Message = fmt.Sprintf("Would move within %s, without fencing evidence: fencing.mode is Disabled (unsafe)", out.ExpectedRTO.Duration)
	default:
		out.Protected, out.Reason = true, s3gwv1alpha1.ReasonPodProtected
		out.Message = fmt.Sprintf("Would move within %s if node %s failed now, fenced by %s", out.ExpectedRTO.Duration,
			p.Node, strings.Join(outlook.Evidence, ", "))
	}
	if out.Protected && autoSalvageApplies(in, p) {
		out.Message += ". " + autoSalvageWarning(in.Spec.Release.LonghornNamespaceOrDefault())
	}
	return out
}

// residualRisks is where the docs list what a failover can still lose.
const residualRisks = `docs/safety.md, "7. Residual risks"`

// autoSalvageApplies reports whether Longhorn's auto-salvage is on and the
// pod has a volume Longhorn would salvage.
func autoSalvageApplies(in Inputs, p Pod) bool {
	return in.AutoSalvage && slices.ContainsFunc(p.Target.Volumes, failover.Volume.Releasable)
}

// autoSalvageWarning says what auto-salvage leaves and how to close it.
// With every replica of a volume failed (the one with the last writes down
// with its node, the volume released by anyone), Longhorn serves again
// those that failed last, stale or not (longhorn.SettingAutoSalvage).
func autoSalvageWarning(namespace string) string {
	return "Warning: Longhorn's auto-salvage is on (setting " + longhorn.SettingAutoSalvage + " in " + namespace + "): " +
		"if every replica of a volume fails, Longhorn serves again those that failed last, which may lack the last writes. " +
		"Set it to false to keep such a volume faulted until the node of the replica with the last writes returns (" + residualRisks + ")"
}

// watching returns the NodeHealthChecks that would remediate the pod's
// node with the template, or why none would.
func watching(in Inputs, p Pod) ([]HealthCheck, string) {
	if !in.HealthChecksInstalled {
		return nil, noHealthCheck(in)
	}
	var out []HealthCheck
	var skipped []string
	for _, h := range in.HealthChecks {
		switch {
		case h.SelectorError != "":
			skipped = append(skipped, fmt.Sprintf("%s has an invalid selector (%s)", h.Name, h.SelectorError))
		case !h.Selects(p.NodeLabels):
			skipped = append(skipped, h.Name+" does not select node "+p.Node)
		case h.Disabled:
			skipped = append(skipped, disabled(h))
		case h.Paused:
			skipped = append(skipped, h.Name+" is paused (spec.pauseRequests)")
		case !h.NoticesLostNode:
			skipped = append(skipped, h.Name+" has no unhealthy condition Ready=Unknown, so it ignores a node that stops reporting")
		default:
			out = append(out, h)
		}
	}
	if len(out) > 0 {
		return out, ""
	}
	if len(skipped) == 0 {
		return nil, noHealthCheck(in)
	}
	return nil, "no NodeHealthCheck would remediate node " + p.Node + ": " + strings.Join(skipped, "; ")
}

// disabled says why NHC would not act on a disabled NodeHealthCheck.
func disabled(h HealthCheck) string {
	why := h.Name + " is disabled (status.phase Disabled"
	if h.DisabledReason != "" {
		why += ": " + h.DisabledReason
	}
	return why + ")"
}

func noHealthCheck(in Inputs) string {
	if !in.HealthChecksInstalled {
		return "NodeHealthCheck is not installed (its CRD is not served): nothing creates S3GWRemediations"
	}
	return "no NodeHealthCheck references this template"
}

// fix says what to change for a reason.
func fix(reason, node string) string {
	switch reason {
	case s3gwv1alpha1.ReasonNoFencingEvidence:
		return "Fix: keep every Longhorn replica off node " + node + " (Longhorn's replica node-level soft anti-affinity, " +
			"and a nodeSelector or affinity that keeps s3gw apart from its replicas), so that storage isolation holds; " +
			"or add a fencing delegate or remediator (FAR, SNR), which still needs the replicas off the node"
	case s3gwv1alpha1.ReasonReplicasUnreachable:
		return "Fix: keep every Longhorn replica off node " + node + " (Longhorn's replica node-level soft anti-affinity, " +
			"and a nodeSelector or affinity that keeps s3gw apart from its replicas): writes the old engine acknowledged " +
			"only to a replica there would be lost, fenced or not. To accept that risk, set release.requireReachableReplicas: false"
	case s3gwv1alpha1.ReasonNeedsProofOfShutdown:
		return "Fix: add a fencing delegate or remediator (FAR, SNR), or use release.strategy ControllerDetach"
	case s3gwv1alpha1.ReasonPodFinalizers:
		return "Fix: remove what puts finalizers on the s3gw pod, or add a fencing delegate or remediator (FAR, SNR): " +
			"with storage isolation alone a pod finalizers would keep in the API is not force-deleted"
	case s3gwv1alpha1.ReasonNoHealthyReplica:
		return "Fix: raise the volume's numberOfReplicas so that Longhorn keeps a healthy replica on another node"
	case s3gwv1alpha1.ReasonLonghornUnavailable:
		return "Fix: install Longhorn 1.5 or later, or set release.longhornNamespace to where its CRs live"
	case s3gwv1alpha1.ReasonNotLonghornRWO:
		return "Fix: put s3gw's data on a ReadWriteOnce volume of a Longhorn StorageClass (driver.longhorn.io)"
	case s3gwv1alpha1.ReasonNoNodeHealthCheck:
		return "Fix: reference this template from a NodeHealthCheck (spec.remediationTemplate or spec.escalatingRemediations) " +
			"whose selector matches node " + node
	default:
		if f, ok := release.VolumeRuleFix(reason); ok {
			return f
		}
		return "See docs/troubleshooting.md, \"Is my s3gw protected?\""
	}
}

// placements is where each of the pod's volumes keeps its replicas.
func placements(p Pod, now time.Time) []s3gwv1alpha1.VolumePlacement {
	out := make([]s3gwv1alpha1.VolumePlacement, 0, len(p.Target.Volumes))
	for _, v := range p.Target.Volumes {
		vp := s3gwv1alpha1.VolumePlacement{ClaimName: v.Claim, LonghornVolume: v.LonghornVolume,
			HealthyReplicasElsewhere: v.HealthyReplicasElsewhere(p.Node, now)}
		for _, r := range v.Replicas {
			name := r.Name + "@" + r.Node
			if !r.Healthy {
				name += " (unhealthy)"
			}
			vp.Replicas = append(vp.Replicas, name)
		}
		out = append(out, vp)
	}
	return out
}
