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

package worldmodel

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Values the modelled components write.
const (
	// Condition statuses as Longhorn and unstructured CRs spell them.
	statusTrue  = "True"
	statusFalse = "False"

	// Longhorn process states, volume states and robustness.
	stateRunning       = "running"
	stateStopped       = "stopped"
	stateError         = "error"
	stateUnknown       = "unknown"
	stateAttached      = "attached"
	stateAttaching     = "attaching"
	stateDetached      = "detached"
	stateDetaching     = "detaching"
	robustnessHealthy  = "healthy"
	robustnessDegraded = "degraded"
	robustnessFaulted  = "faulted"

	fieldSpec   = "spec"
	fieldStatus = "status"
)

func withTimeAdded(t corev1.Taint, at metav1.Time) corev1.Taint {
	t.TimeAdded = &at
	return t
}

// outOfServiceTaint is node.kubernetes.io/out-of-service=nodeshutdown:NoExecute.
func outOfServiceTaint() corev1.Taint {
	return corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
}
