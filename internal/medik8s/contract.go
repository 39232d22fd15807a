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

// Package medik8s holds the parts of NodeHealthCheck's remediation contract
// that medik8s/common does not export: how a remediation CR names its node,
// and the annotation NHC recognises its own CRs by.
package medik8s

import (
	"github.com/medik8s/common/pkg/annotations"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TemplateNameAnnotation is the annotation NHC puts on the CRs it creates,
// naming the template; with the node-name annotation it is how NHC finds
// "its" CRs, whoever owns them.
const TemplateNameAnnotation = "remediation.medik8s.io/template-name"

// NodeName returns the node a remediation CR is for: the medik8s node-name
// annotation, else the CR's name (NHC names CRs after nodes unless it
// generates names).
func NodeName(obj metav1.Object) string {
	if name := obj.GetAnnotations()[annotations.NodeNameAnnotation]; name != "" {
		return name
	}
	return obj.GetName()
}
