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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelSelector is a metav1.LabelSelector, in the same JSON, that the API
// server checks the way Kubernetes checks labels: keys are qualified names,
// values are label values, operators are known, and it requires a label.
// It is a copy because checking keys and values costs CEL time that the API
// server bounds from the schema's limits, which metav1.LabelSelector lacks;
// its limits are far above what an s3gw selector needs.
// +structType=atomic
// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="workloadSelector must not be empty: an empty selector matches every pod on the node"
// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || size(self.matchExpressions) == 0 || (has(self.matchLabels) && size(self.matchLabels) > 0) || self.matchExpressions.exists(e, e.operator in ['In', 'Exists'])",message="workloadSelector needs a label the pods must have (matchLabels, or an In or Exists expression): NotIn and DoesNotExist alone match every pod that lacks the label"
type LabelSelector struct {
	// MatchLabels are labels the pods must carry, key and value alike.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!k.contains('/') || k.indexOf('/') <= 253))`,message="keys must be label keys: a name of at most 63 letters, digits, '-', '_' and '.' that begins and ends with a letter or digit, after an optional DNS subdomain and '/', e.g. app.kubernetes.io/name"
	// +optional
	MatchLabels map[string]LabelValue `json:"matchLabels,omitempty"`

	// MatchExpressions are requirements the pods' labels must meet, all of them.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is a metav1.LabelSelectorRequirement: a key, an
// operator and the values the operator takes.
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",message="operators In and NotIn need at least one value"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",message="operators Exists and DoesNotExist take no values"
type LabelSelectorRequirement struct {
	// Key is the label key, e.g. app.kubernetes.io/name.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$') && (!self.contains('/') || self.indexOf('/') <= 253)",message="must be a label key: an optional DNS subdomain and / before a name of at most 63 letters, digits, '-', '_' and '.' that begins and ends with a letter or digit, e.g. app.kubernetes.io/name"
	Key string `json:"key"`

	// Operator is In, NotIn, Exists or DoesNotExist.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator metav1.LabelSelectorOperator `json:"operator"`

	// Values are the label values In and NotIn compare with; Exists and
	// DoesNotExist take none.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Values []LabelValue `json:"values,omitempty"`
}

// LabelValue is a label value: empty, or at most 63 letters, digits, '-',
// '_' and '.' that begin and end with a letter or digit.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="self.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$')",message="must be a label value: empty, or letters, digits, '-', '_' and '.' that begin and end with a letter or digit"
type LabelValue string

// Meta is the selector as a metav1.LabelSelector, which label parsing takes.
func (s *LabelSelector) Meta() *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := &metav1.LabelSelector{}
	if s.MatchLabels != nil {
		out.MatchLabels = make(map[string]string, len(s.MatchLabels))
		for k, v := range s.MatchLabels {
			out.MatchLabels[k] = string(v)
		}
	}
	for _, r := range s.MatchExpressions {
		req := metav1.LabelSelectorRequirement{Key: r.Key, Operator: r.Operator}
		for _, v := range r.Values {
			req.Values = append(req.Values, string(v))
		}
		out.MatchExpressions = append(out.MatchExpressions, req)
	}
	return out
}
