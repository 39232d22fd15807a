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
	"errors"
	"fmt"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NHC's admission webhook rules for the fields the emulator models
// (internal/webhook/v1alpha1/nodehealthcheck_webhook.go), with its messages
// (lower-cased, as Go error strings are).

// Validate checks the spec as NHC's webhook does on create and update; the
// reader lists templates (NHC's webhook uses NHC's client).
func (e *Emulator) Validate(ctx context.Context, templates client.Reader) error {
	var errs []error
	if len(e.Selector.MatchLabels) == 0 && len(e.Selector.MatchExpressions) == 0 {
		errs = append(errs, errors.New("selector is mandatory"))
	} else if _, err := metav1.LabelSelectorAsSelector(&e.Selector); err != nil {
		errs = append(errs, fmt.Errorf("invalid selector: %w", err))
	}
	if e.Template == (TemplateRef{}) && len(e.Escalation) == 0 {
		errs = append(errs, errors.New("either RemediationTemplate or at least one EscalatingRemediations must be set"))
	}
	if e.Template != (TemplateRef{}) && len(e.Escalation) > 0 {
		errs = append(errs, errors.New("remediationTemplate and escalatingRemediations usage is mutual exclusive"))
	}
	errs = append(errs, ValidateEscalation(ctx, templates, e.Escalation))
	return errors.Join(errs...)
}

// ValidateEscalation is NHC's validateEscalatingRemediations: unique orders,
// timeouts of at least a minute, and a template kind repeated only if every
// template of that kind in the cluster, not only those referenced, carries
// remediation.medik8s.io/multiple-templates-support at the time the
// NodeHealthCheck is admitted.
func ValidateEscalation(ctx context.Context, templates client.Reader, steps []Step) error {
	var errs []error
	orders := map[int]bool{}
	for _, s := range steps {
		if orders[s.Order] {
			errs = append(errs, fmt.Errorf("escalatingRemediation order must be unique: found duplicate order %d", s.Order))
			break
		}
		orders[s.Order] = true
	}
	for _, s := range steps {
		if s.Timeout < time.Minute {
			errs = append(errs, fmt.Errorf("escalatingRemediation timeout must be at least one minute: found timeout %s", s.Timeout))
			break
		}
	}
	kinds := map[string]bool{}
	for _, s := range steps {
		if kinds[s.Template.Kind] && !multipleTemplatesSupported(ctx, templates, s.Template) {
			errs = append(errs, fmt.Errorf("using multiple templates of same kind is not supported for this template: duplicate template kind: %s", s.Template.Kind))
			break
		}
		kinds[s.Template.Kind] = true
	}
	return errors.Join(errs...)
}

// multipleTemplatesSupported is NHC's isMultipleTemplatesSupported: it lists
// every template of the kind; none, or a list error, means no support.
func multipleTemplatesSupported(ctx context.Context, templates client.Reader, ref TemplateRef) bool {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(ref.GVK().GroupVersion().WithKind(ref.Kind + "List"))
	if err := templates.List(ctx, list); err != nil || len(list.Items) == 0 {
		return false
	}
	for _, t := range list.Items {
		if _, ok := t.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]; !ok {
			return false
		}
	}
	return true
}

// NamespacedReader lists in one namespace only: a scenario that shares an
// API server with others sees only its own templates, as if it had a
// cluster of its own.
func NamespacedReader(r client.Reader, namespace string) client.Reader {
	return namespacedReader{Reader: r, namespace: namespace}
}

type namespacedReader struct {
	client.Reader
	namespace string
}

func (r namespacedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.Reader.List(ctx, list, append(opts, client.InNamespace(r.namespace))...)
}
