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

package nhc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
)

// Contract constants NHC uses that medik8s/common does not export.
const (
	TemplateNameAnnotation = medik8s.TemplateNameAnnotation
	PartOfLabel            = "app.kubernetes.io/part-of"
	PartOfValue            = "node-healthcheck-controller"
	ControlPlaneLabel      = "remediation.medik8s.io/isControlPlaneNode"
	LeaseNamespace         = "medik8s-leases"
	// HealthyDelayAnnotation is when NHC first saw the node healthy again
	// while spec.healthyDelay holds the CR.
	HealthyDelayAnnotation = "remediation.medik8s.io/healthy-delay"
	// ManuallyConfirmedHealthyAnnotation on a Node overrides healthyDelay.
	ManuallyConfirmedHealthyAnnotation = "remediation.medik8s.io/manually-confirmed-healthy"
	// DefaultTimeout is NHC's classic remediation duration: the lease lasts
	// it plus LeaseBuffer, and a CR times out after three of them.
	DefaultTimeout = 10 * time.Minute
	// DefaultUnhealthyDuration is how long NHC's default unhealthy
	// conditions (Ready False or Unknown) must hold before it remediates.
	DefaultUnhealthyDuration = 300 * time.Second
)

// NodeHealthCheckGVK is NHC's cluster-scoped CR.
var NodeHealthCheckGVK = schema.GroupVersionKind{Group: "remediation.medik8s.io", Version: "v1alpha1", Kind: "NodeHealthCheck"}

// defaultMinHealthy is the CRD's default for spec.minHealthy.
var defaultMinHealthy = intstr.FromString("51%")

// TemplateRef names the remediation template a NodeHealthCheck references.
type TemplateRef struct {
	APIVersion, Kind, Namespace, Name string
}

// GVK is the template's own kind.
func (t TemplateRef) GVK() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(t.APIVersion, t.Kind)
}

// RemediationGVK is the template's group and version with "Template" trimmed.
func (t TemplateRef) RemediationGVK() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(t.APIVersion, strings.TrimSuffix(t.Kind, "Template"))
}

func (t TemplateRef) object() map[string]any {
	return map[string]any{"apiVersion": t.APIVersion, "kind": t.Kind, "namespace": t.Namespace, "name": t.Name}
}

// Step is one entry of spec.escalatingRemediations.
type Step struct {
	Template TemplateRef
	Order    int
	Timeout  time.Duration
}

// Emulator plays one NodeHealthCheck. Its fields are the NodeHealthCheck's
// spec; set them before CreateNodeHealthCheck. Reconcile runs one pass of
// NHC's reconcile; Remediate, TimeOut, NodeHealthy and NodeDeleted are the
// pieces of that pass for step-by-step tests.
//
// Time is the emulator's Clock throughout, where NHC mixes its currentTime
// with time.Now (leases, healthyDelay). A step starts when the emulator
// creates its CR; a node's unhealthy time is its Ready condition's
// lastTransitionTime, so a fake clock must not lag behind the real time
// those are written with.
type Emulator struct {
	// Client is NHC's client; tests impersonate NHC's service account bound
	// to the operator's aggregation ClusterRole, so a missing verb fails.
	// NHC's manager client (cmd/main.go) reads typed objects — Nodes, and
	// Leases through medik8s/common's lease manager — from its cache, and
	// unstructured ones (templates, remediation CRs) from the API server,
	// as controller-runtime does without CacheOptions.Unstructured: each
	// pass lists the CRs once per healthy node (HandleHealthyNode →
	// ListRemediationCRs), a live LIST per node and remediation kind.
	Client client.Client
	Name   string
	// Template is spec.remediationTemplate (classic mode); unused when
	// Escalation is set.
	Template TemplateRef
	// Escalation is spec.escalatingRemediations.
	Escalation []Step
	// Selector is spec.selector; NHC's webhook requires one.
	Selector metav1.LabelSelector
	// MinHealthy is spec.minHealthy; nil is the CRD default, 51%.
	MinHealthy *intstr.IntOrString
	// UnhealthyDuration is the duration of NHC's default unhealthy
	// conditions (Ready False or Unknown); zero means 300 s.
	UnhealthyDuration time.Duration
	// UnhealthyConditions is spec.unhealthyConditions; empty means NHC's
	// defaults, Ready False or Unknown for UnhealthyDuration.
	UnhealthyConditions []UnhealthyCondition
	// HealthyDelay is spec.healthyDelay: nil or zero deletes CRs as soon as
	// the node is healthy, negative never.
	HealthyDelay *time.Duration
	// PauseRequests is spec.pauseRequests.
	PauseRequests []string
	// StormCooldownDuration is spec.stormCooldownDuration: nil turns storm
	// recovery off.
	StormCooldownDuration *time.Duration
	Clock                 clock.PassiveClock
	// Timeout is NHC's classic remediation duration (DefaultRemediationDuration);
	// zero means DefaultTimeout.
	Timeout time.Duration
	// OnCreate, if set, is told about every CR created (for timelines).
	OnCreate func(node, name string)
	// Templates, if set, is what CreateNodeHealthCheck lists templates with
	// for NHC's webhook rules, instead of its admin client: tests that share
	// one API server among scenarios scope it with NamespacedReader.
	Templates client.Reader

	mu        sync.Mutex
	uid       types.UID
	unhealthy []*UnhealthyNode
	events    []Event
	// disabled is the Disabled condition's reason, "" when enabled;
	// disabledSet once the condition was set.
	disabled    string
	disabledSet bool
	// storm and cooldownSince are the StormActive and StormCooldownActive
	// conditions.
	storm         bool
	cooldownSince *time.Time

	// passes are the reconcile passes timed (passes.go); crLists counts
	// the live LISTs of remediation CRs.
	passMu  sync.Mutex
	passes  []Pass
	crLists atomic.Int64
}

// UnhealthyNode is an entry of NHC's status.unhealthyNodes.
type UnhealthyNode struct {
	Name         string
	Remediations []*Remediation
	// ConditionsHealthy is when the node's conditions were first seen
	// healthy while CRs still existed.
	ConditionsHealthy *time.Time
}

// Remediation is an entry of status.unhealthyNodes[].remediations.
type Remediation struct {
	GVK             schema.GroupVersionKind
	Namespace, Name string
	UID             types.UID
	Started         time.Time
	TimedOut        *time.Time
	TemplateName    string
}

// Event is an event NHC records on its NodeHealthCheck.
type Event struct {
	Type, Reason, Message string
}

func (e *Emulator) timeout() time.Duration {
	if e.Timeout > 0 {
		return e.Timeout
	}
	return DefaultTimeout
}

func (e *Emulator) unhealthyDuration() time.Duration {
	if e.UnhealthyDuration > 0 {
		return e.UnhealthyDuration
	}
	return DefaultUnhealthyDuration
}

// UnhealthyCondition is an entry of spec.unhealthyConditions: a node whose
// condition Type has had Status for Duration is unhealthy.
type UnhealthyCondition struct {
	Type     corev1.NodeConditionType
	Status   corev1.ConditionStatus
	Duration time.Duration
}

// unhealthyConditions are spec.unhealthyConditions, NHC's CRD defaults
// (with UnhealthyDuration) when none are set.
func (e *Emulator) unhealthyConditions() []UnhealthyCondition {
	if len(e.UnhealthyConditions) > 0 {
		return e.UnhealthyConditions
	}
	d := e.unhealthyDuration()
	return []UnhealthyCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Duration: d},
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Duration: d},
	}
}

func (e *Emulator) holder() string { return "NodeHealthCheck-" + e.Name }

// templates are the templates the NodeHealthCheck references, in spec order
// (NHC's GetAllRemediationTemplates).
func (e *Emulator) templates() []TemplateRef {
	if len(e.Escalation) == 0 {
		return []TemplateRef{e.Template}
	}
	out := make([]TemplateRef, len(e.Escalation))
	for i, s := range e.Escalation {
		out[i] = s.Template
	}
	return out
}

// sortedSteps is the escalation in order.
func (e *Emulator) sortedSteps() []Step {
	steps := slices.Clone(e.Escalation)
	slices.SortStableFunc(steps, func(a, b Step) int { return a.Order - b.Order })
	return steps
}

// CreateNodeHealthCheck validates the spec as NHC's webhook does, creates the
// NodeHealthCheck object that owns the CRs (or adopts an existing one) and
// remembers its UID. adminClient needs rights on nodehealthchecks, which
// NHC's aggregated role does not grant.
func (e *Emulator) CreateNodeHealthCheck(ctx context.Context, adminClient client.Client) error {
	templates := e.Templates
	if templates == nil {
		templates = adminClient
	}
	if err := e.Validate(ctx, templates); err != nil {
		return fmt.Errorf("NodeHealthCheck %s is rejected by NHC's webhook: %w", e.Name, err)
	}
	nhcObj := &unstructured.Unstructured{Object: map[string]any{"spec": e.spec()}}
	nhcObj.SetGroupVersionKind(NodeHealthCheckGVK)
	nhcObj.SetName(e.Name)
	if err := adminClient.Create(ctx, nhcObj); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating NodeHealthCheck %s: %w", e.Name, err)
		}
		if err := adminClient.Get(ctx, client.ObjectKey{Name: e.Name}, nhcObj); err != nil {
			return fmt.Errorf("getting NodeHealthCheck %s: %w", e.Name, err)
		}
	}
	e.mu.Lock()
	e.uid = nhcObj.GetUID()
	e.mu.Unlock()
	return nil
}

// spec renders the NodeHealthCheck's spec.
func (e *Emulator) spec() map[string]any {
	selector := map[string]any{}
	if len(e.Selector.MatchLabels) > 0 {
		labels := map[string]any{}
		for k, v := range e.Selector.MatchLabels {
			labels[k] = v
		}
		selector["matchLabels"] = labels
	}
	if len(e.Selector.MatchExpressions) > 0 {
		selector["matchExpressions"] = anySlice(e.Selector.MatchExpressions, func(x metav1.LabelSelectorRequirement) any {
			return map[string]any{"key": x.Key, "operator": string(x.Operator),
				"values": anySlice(x.Values, func(v string) any { return v })}
		})
	}
	minHealthy := defaultMinHealthy
	if e.MinHealthy != nil {
		minHealthy = *e.MinHealthy
	}
	spec := map[string]any{
		"selector":   selector,
		"minHealthy": minHealthy.String(),
		"unhealthyConditions": anySlice(e.unhealthyConditions(), func(c UnhealthyCondition) any {
			return map[string]any{"type": string(c.Type), "status": string(c.Status), "duration": c.Duration.String()}
		}),
	}
	if len(e.Escalation) == 0 {
		spec["remediationTemplate"] = e.Template.object()
	} else {
		spec["escalatingRemediations"] = anySlice(e.Escalation, func(s Step) any {
			return map[string]any{"remediationTemplate": s.Template.object(), "order": int64(s.Order), "timeout": s.Timeout.String()}
		})
	}
	if e.HealthyDelay != nil {
		spec["healthyDelay"] = e.HealthyDelay.String()
	}
	if e.StormCooldownDuration != nil {
		spec["stormCooldownDuration"] = e.StormCooldownDuration.String()
	}
	if len(e.PauseRequests) > 0 {
		spec["pauseRequests"] = anySlice(e.PauseRequests, func(r string) any { return r })
	}
	return spec
}

// anySlice converts a slice for an unstructured object.
func anySlice[T any](in []T, f func(T) any) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// UnhealthyNodes returns a copy of status.unhealthyNodes.
func (e *Emulator) UnhealthyNodes() []UnhealthyNode {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]UnhealthyNode, 0, len(e.unhealthy))
	for _, n := range e.unhealthy {
		c := UnhealthyNode{Name: n.Name, ConditionsHealthy: n.ConditionsHealthy}
		for _, r := range n.Remediations {
			r := *r
			c.Remediations = append(c.Remediations, &r)
		}
		out = append(out, c)
	}
	return out
}

// Remediating is NHC's isRemediating: a node has a remediation in status.
// While it holds, NHC's webhook refuses to delete the NodeHealthCheck or
// change its selector or templates.
func (e *Emulator) Remediating() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range e.unhealthy {
		if len(n.Remediations) > 0 {
			return true
		}
	}
	return false
}

// Events returns the events recorded so far.
func (e *Emulator) Events() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

// EventsWithReason returns the messages of the events with that reason.
func (e *Emulator) EventsWithReason(reason string) []string {
	var out []string
	for _, ev := range e.Events() {
		if ev.Reason == reason {
			out = append(out, ev.Message)
		}
	}
	return out
}

func (e *Emulator) record(eventType, reason, format string, args ...any) {
	e.events = append(e.events, Event{Type: eventType, Reason: reason, Message: fmt.Sprintf(format, args...)})
}
