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
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NHC's template checks on every pass (internal/controller/resources/
// templates.go, ValidateTemplates and handleTemplateError) and the Disabled
// condition they drive (nodehealthcheck_controller.go).

// Reasons of the Disabled condition.
const (
	ReasonTemplateNotFound = "RemediationTemplateNotFound"
	ReasonTemplateInvalid  = "RemediationTemplateInvalid"
)

// templateNotFoundRequeue is templateNotFoundRequeueAfter.
const templateNotFoundRequeue = 15 * time.Second

// Disabled returns the reason NHC's Disabled condition is True, or "" while
// the NodeHealthCheck is enabled.
func (e *Emulator) Disabled() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.disabled
}

// checkTemplates is ValidateTemplates: every referenced template, in spec
// order, must exist and have spec.template. It returns the reason to
// disable the NodeHealthCheck, or an error when NHC cannot tell (it then
// retries with backoff).
func (e *Emulator) checkTemplates(ctx context.Context) (reason string, err error) {
	for _, ref := range e.templates() {
		template := &unstructured.Unstructured{}
		template.SetGroupVersionKind(ref.GVK())
		err := e.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, template)
		switch {
		case err != nil && templateNotFound(err):
			return ReasonTemplateNotFound, nil
		case err != nil:
			return "", fmt.Errorf("failed to get external remediation template %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		if _, found, err := unstructured.NestedMap(template.Object, "spec", "template"); !found || err != nil {
			return ReasonTemplateInvalid, nil
		}
	}
	return "", nil
}

// templateNotFound is handleTemplateError's test, error texts included.
func templateNotFound(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) ||
		strings.Contains(err.Error(), "could not find") || strings.Contains(err.Error(), "not found")
}

// setDisabled records the Disabled condition, with NHC's event when it
// changes. The caller holds e.mu.
func (e *Emulator) setDisabled(reason string) {
	if e.disabledSet && reason == e.disabled {
		return
	}
	e.disabled, e.disabledSet = reason, true
	if reason == "" {
		e.record("Normal", "Enabled", "No issues found, NodeHealthCheck is enabled.")
		return
	}
	e.record("Warning", "Disabled", "Disabling NHC. Reason: %s", reason)
}
