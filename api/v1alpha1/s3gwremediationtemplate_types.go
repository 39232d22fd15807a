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

// S3GWRemediationTemplateSpec holds the template NodeHealthCheck copies.
type S3GWRemediationTemplateSpec struct {
	// Template is copied into every S3GWRemediation NHC creates.
	Template S3GWRemediationTemplateResource `json:"template"`
}

// S3GWRemediationTemplateResource is the part NHC copies: spec.template.spec.
type S3GWRemediationTemplateResource struct {
	// Spec becomes the S3GWRemediation's spec.
	// +kubebuilder:default={}
	Spec S3GWRemediationSpec `json:"spec"`
}

// S3GWRemediationTemplate is referenced from a NodeHealthCheck's
// remediationTemplate or escalatingRemediations. The operator's webhook adds
// remediation.medik8s.io/multiple-templates-support at admission (its
// template controller later, if the webhook was not served), so NHC uses
// generated CR names and allows several templates in one escalation.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=s3gwrt;s3gwremediationtemplate
type S3GWRemediationTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec S3GWRemediationTemplateSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// S3GWRemediationTemplateList contains a list of S3GWRemediationTemplate.
type S3GWRemediationTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []S3GWRemediationTemplate `json:"items"`
}
