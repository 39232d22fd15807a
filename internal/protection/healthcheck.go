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
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// NodeHealthCheckGVK is NodeHealthCheck's kind; it is cluster-scoped and
// read only.
var NodeHealthCheckGVK = schema.GroupVersionKind{Group: "remediation.medik8s.io", Version: "v1alpha1", Kind: "NodeHealthCheck"}

// DefaultUnhealthyDuration is the duration of NodeHealthCheck's default
// unhealthy conditions (Ready False or Unknown for 300 s), which its CRD
// fills in when spec.unhealthyConditions is left out.
const DefaultUnhealthyDuration = 300 * time.Second

// HealthCheck is what the report needs of a NodeHealthCheck that
// references a template.
type HealthCheck struct {
	Name string
	// Selector selects the nodes it watches; nil when it does not parse.
	Selector labels.Selector
	// SelectorError says why spec.selector does not parse.
	SelectorError string
	// Paused is true while spec.pauseRequests is not empty: it starts no
	// remediation.
	Paused bool
	// Disabled is true in NHC's phase Disabled (its Disabled condition is
	// True: a referenced template is missing or invalid), where NHC starts
	// no remediation; DisabledReason is NHC's status.reason.
	Disabled       bool
	DisabledReason string
	// NoticesLostNode is false when no unhealthy condition matches a node
	// whose kubelet died (Ready=Unknown); NoticedAfter is that condition's
	// duration.
	NoticesLostNode bool
	NoticedAfter    time.Duration
	// StepDelay is how long earlier escalation steps may run before the
	// template's step starts: the sum of their timeouts (worst case).
	StepDelay time.Duration
}

// Selects reports whether the NodeHealthCheck watches a node with these
// labels.
func (h HealthCheck) Selects(nodeLabels map[string]string) bool {
	return h.Selector != nil && h.Selector.Matches(labels.Set(nodeLabels))
}

// PhaseDisabled is NodeHealthCheck's status.phase while its Disabled
// condition is True (node-healthcheck-operator api/v1alpha1
// nodehealthcheck_types.go; set in patchStatus of
// internal/controller/nodehealthcheck_controller.go).
const PhaseDisabled = "Disabled"

// nodeHealthCheckSpec is the part of NodeHealthCheck's spec the report reads.
type nodeHealthCheckSpec struct {
	Selector            metav1.LabelSelector `json:"selector"`
	UnhealthyConditions []struct {
		Type     string `json:"type"`
		Status   string `json:"status"`
		Duration string `json:"duration"`
	} `json:"unhealthyConditions"`
	RemediationTemplate    *templateReference `json:"remediationTemplate"`
	EscalatingRemediations []escalationStep   `json:"escalatingRemediations"`
	PauseRequests          []string           `json:"pauseRequests"`
}

type escalationStep struct {
	RemediationTemplate templateReference `json:"remediationTemplate"`
	Order               int               `json:"order"`
	Timeout             string            `json:"timeout"`
}

type templateReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

func (t templateReference) is(template types.NamespacedName) bool {
	gv, err := schema.ParseGroupVersion(t.APIVersion)
	return err == nil && gv.Group == s3gwv1alpha1.GroupVersion.Group && t.Kind == "S3GWRemediationTemplate" &&
		t.Namespace == template.Namespace && t.Name == template.Name
}

// ReferencingHealthCheck reads a NodeHealthCheck and returns what the
// report needs of it, and false when it does not reference the template
// (in spec.remediationTemplate or spec.escalatingRemediations).
func ReferencingHealthCheck(obj *unstructured.Unstructured, template types.NamespacedName) (HealthCheck, bool, error) {
	raw, _, _ := unstructured.NestedMap(obj.Object, "spec")
	var spec nodeHealthCheckSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return HealthCheck{}, false, fmt.Errorf("reading NodeHealthCheck %s: %w", obj.GetName(), err)
	}
	h := HealthCheck{Name: obj.GetName(), Paused: len(spec.PauseRequests) > 0}
	if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase == PhaseDisabled {
		h.Disabled = true
		h.DisabledReason, _, _ = unstructured.NestedString(obj.Object, "status", "reason")
	}
	referenced := spec.RemediationTemplate != nil && spec.RemediationTemplate.is(template)
	if !referenced {
		steps := slices.Clone(spec.EscalatingRemediations)
		slices.SortStableFunc(steps, func(a, b escalationStep) int { return a.Order - b.Order })
		for _, step := range steps {
			if step.RemediationTemplate.is(template) {
				referenced = true
				break
			}
			timeout, err := time.ParseDuration(step.Timeout)
			if err != nil {
				return HealthCheck{}, false, fmt.Errorf("NodeHealthCheck %s: escalation step %d has timeout %q: %w",
					obj.GetName(), step.Order, step.Timeout, err)
			}
			h.StepDelay += timeout
		}
	}
	if !referenced {
		return HealthCheck{}, false, nil
	}

	selector, err := metav1.LabelSelectorAsSelector(&spec.Selector)
	if err != nil {
		h.SelectorError = err.Error()
	} else {
		h.Selector = selector
	}
	if len(spec.UnhealthyConditions) == 0 {
		h.NoticesLostNode, h.NoticedAfter = true, DefaultUnhealthyDuration
	}
	for _, c := range spec.UnhealthyConditions {
		if c.Type != "Ready" || c.Status != "Unknown" {
			continue
		}
		d, err := time.ParseDuration(c.Duration)
		if err != nil {
			return HealthCheck{}, false, fmt.Errorf("NodeHealthCheck %s: unhealthy condition Ready=Unknown has duration %q: %w",
				obj.GetName(), c.Duration, err)
		}
		if !h.NoticesLostNode || d < h.NoticedAfter {
			h.NoticesLostNode, h.NoticedAfter = true, d
		}
	}
	return h, true, nil
}
