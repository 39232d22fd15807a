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

package far

import (
	"fmt"
	"slices"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FAR's API (api/v1alpha1/fenceagentsremediation_types.go,
// pkg/utils/conditions.go). The CRDs are the test fixtures in
// test/crds/medik8s, which keep no schema: the defaults FAR's CRD declares
// are applied by withDefaults.
const (
	APIVersion   = "fence-agents-remediation.medik8s.io/v1alpha1"
	Kind         = "FenceAgentsRemediation"
	TemplateKind = "FenceAgentsRemediationTemplate"

	// Finalizer is FARFinalizer.
	Finalizer = "fence-agents-remediation.medik8s.io/far-finalizer"
	// NoScheduleTaintKey is FARNoScheduleTaintKey, FAR's own taint (effect
	// NoSchedule) on the node it remediates.
	NoScheduleTaintKey = "remediation.medik8s.io/fence-agents-remediation"

	// FenceAgentActionSucceededType is True once the agent exited 0.
	FenceAgentActionSucceededType = "FenceAgentActionSucceeded"
	ProcessingType                = "Processing"
	SucceededType                 = "Succeeded"

	ResourceDeletion  = "ResourceDeletion"
	OutOfServiceTaint = "OutOfServiceTaint"

	// ActionOff and ActionReboot are the only --action values FAR accepts.
	ActionOff    = "off"
	ActionReboot = "reboot"
)

// GVK is the FenceAgentsRemediation kind; TemplateGVK its template's.
var (
	GVK         = schema.FromAPIVersionAndKind(APIVersion, Kind)
	TemplateGVK = schema.FromAPIVersionAndKind(APIVersion, TemplateKind)
)

// Spec is FenceAgentsRemediationSpec.
type Spec struct {
	Agent               string                       `json:"agent"`
	RetryCount          int                          `json:"retrycount,omitempty"`
	RetryInterval       *metav1.Duration             `json:"retryinterval,omitempty"`
	Timeout             *metav1.Duration             `json:"timeout,omitempty"`
	SharedParameters    map[string]string            `json:"sharedparameters,omitempty"`
	NodeParameters      map[string]map[string]string `json:"nodeparameters,omitempty"`
	RemediationStrategy string                       `json:"remediationStrategy,omitempty"`
	NodeSecretNames     map[string]string            `json:"nodeSecretNames,omitempty"`
	SharedSecretName    *string                      `json:"sharedSecretName,omitempty"`
}

// withDefaults applies the CRD defaults of FenceAgentsRemediationSpec's
// kubebuilder markers: 5 attempts 5 s apart, 60 s each, ResourceDeletion.
func (s Spec) withDefaults() Spec {
	if s.RetryCount == 0 {
		s.RetryCount = 5
	}
	if s.RetryInterval == nil {
		s.RetryInterval = &metav1.Duration{Duration: 5 * time.Second}
	}
	if s.Timeout == nil {
		s.Timeout = &metav1.Duration{Duration: 60 * time.Second}
	}
	if s.RemediationStrategy == "" {
		s.RemediationStrategy = ResourceDeletion
	}
	return s
}

// Status is FenceAgentsRemediationStatus.
type Status struct {
	Conditions     []metav1.Condition `json:"conditions,omitempty"`
	LastUpdateTime *metav1.Time       `json:"lastUpdateTime,omitempty"`
}

func (s *Status) deepCopy() *Status {
	out := &Status{Conditions: slices.Clone(s.Conditions)}
	if s.LastUpdateTime != nil {
		t := *s.LastUpdateTime
		out.LastUpdateTime = &t
	}
	return out
}

// FenceAgentsRemediation is FAR's CR, read from and written back to an
// unstructured object (no scheme registration).
type FenceAgentsRemediation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec,omitempty"`
	Status            Status `json:"status,omitempty"`
}

func fromUnstructured(u *unstructured.Unstructured) (*FenceAgentsRemediation, error) {
	far := &FenceAgentsRemediation{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, far); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", Kind, u.GetNamespace(), u.GetName(), err)
	}
	return far, nil
}

func (far *FenceAgentsRemediation) toUnstructured() (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(far)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s: %w", Kind, far.Namespace, far.Name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(GVK)
	return u, nil
}

// NodeName is FAR's GetNodeName: the node-name annotation, else the CR's
// name.
func NodeName(obj metav1.Object) string {
	if node, ok := obj.GetAnnotations()[annotations.NodeNameAnnotation]; ok {
		return node
	}
	return obj.GetName()
}

// NewTemplate is a FenceAgentsRemediationTemplate with the spec, carrying
// the multiple-templates-support annotation FAR's defaulting webhook adds to
// every template (farTemplateDefaulter.Default), so that NHC names FAR CRs
// with generateName.
func NewTemplate(namespace, name string, spec Spec) (*unstructured.Unstructured, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s: %w", TemplateKind, namespace, name, err)
	}
	t := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": raw}}}}
	t.SetGroupVersionKind(TemplateGVK)
	t.SetNamespace(namespace)
	t.SetName(name)
	t.SetAnnotations(map[string]string{annotations.MultipleTemplatesSupportedAnnotation: "true"})
	return t, nil
}
