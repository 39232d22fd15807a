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

// Package template keeps S3GWRemediationTemplates usable by NodeHealthCheck:
// the multiple-templates-support annotation NHC's webhook checks at
// admission, and the default template created at start-up.
package template

import (
	"github.com/medik8s/common/pkg/annotations"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HasMultipleTemplatesSupport reports whether the object carries
// remediation.medik8s.io/multiple-templates-support (any value: NHC checks
// presence only).
func HasMultipleTemplatesSupport(obj metav1.Object) bool {
	_, ok := obj.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]
	return ok
}

// AddMultipleTemplatesSupport sets the annotation to "true" unless it is
// present, and reports whether it changed the object. With it NHC names CRs
// "<node>-<random>" and accepts several of our templates in one escalation.
func AddMultipleTemplatesSupport(obj metav1.Object) bool {
	if HasMultipleTemplatesSupport(obj) {
		return false
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotations.MultipleTemplatesSupportedAnnotation] = "true"
	obj.SetAnnotations(ann)
	return true
}
