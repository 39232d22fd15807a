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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Definition is what a NodeHealthCheck object says of its classic-mode
// remediation, as the emulator runs it: a NodeHealthCheck someone else
// wrote (the shipped one in config/nodehealthcheck, or the one a Helm
// chart created) read into Emulator fields.
type Definition struct {
	Name                string
	Selector            metav1.LabelSelector
	MinHealthy          *intstr.IntOrString
	UnhealthyConditions []UnhealthyCondition
	// Template is spec.remediationTemplate.
	Template TemplateRef
}

// definitionSpec is the part of NodeHealthCheckSpec
// (api/v1alpha1/nodehealthcheck_types.go) a Definition reads.
type definitionSpec struct {
	Selector            metav1.LabelSelector `json:"selector"`
	MinHealthy          *intstr.IntOrString  `json:"minHealthy"`
	UnhealthyConditions []struct {
		Type     corev1.NodeConditionType `json:"type"`
		Status   corev1.ConditionStatus   `json:"status"`
		Duration metav1.Duration          `json:"duration"`
	} `json:"unhealthyConditions"`
	RemediationTemplate *corev1.ObjectReference `json:"remediationTemplate"`
}

// ReadDefinition reads a NodeHealthCheck with a remediationTemplate.
func ReadDefinition(obj *unstructured.Unstructured) (Definition, error) {
	if obj.GroupVersionKind() != NodeHealthCheckGVK {
		return Definition{}, fmt.Errorf("%s %s is not a NodeHealthCheck", obj.GroupVersionKind(), obj.GetName())
	}
	raw, _, _ := unstructured.NestedMap(obj.Object, "spec")
	var spec definitionSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(raw, &spec, false); err != nil {
		return Definition{}, fmt.Errorf("reading NodeHealthCheck %s: %w", obj.GetName(), err)
	}
	if spec.RemediationTemplate == nil {
		return Definition{}, fmt.Errorf("NodeHealthCheck %s has no spec.remediationTemplate", obj.GetName())
	}
	d := Definition{Name: obj.GetName(), Selector: spec.Selector, MinHealthy: spec.MinHealthy}
	for _, c := range spec.UnhealthyConditions {
		d.UnhealthyConditions = append(d.UnhealthyConditions, UnhealthyCondition{Type: c.Type, Status: c.Status, Duration: c.Duration.Duration})
	}
	ref := spec.RemediationTemplate
	d.Template = TemplateRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
	return d, nil
}

// Duration is how long the node must have had the condition type/status
// before it counts as unhealthy, and false when no condition says so.
func (d Definition) Duration(conditionType corev1.NodeConditionType, status corev1.ConditionStatus) (time.Duration, bool) {
	for _, c := range d.UnhealthyConditions {
		if c.Type == conditionType && c.Status == status {
			return c.Duration, true
		}
	}
	return 0, false
}

// Apply makes e emulate the NodeHealthCheck: its name, selector,
// minHealthy, unhealthy conditions and template.
func (d Definition) Apply(e *Emulator) {
	e.Name, e.Selector, e.MinHealthy, e.UnhealthyConditions, e.Template = d.Name, d.Selector, d.MinHealthy, d.UnhealthyConditions, d.Template
}
