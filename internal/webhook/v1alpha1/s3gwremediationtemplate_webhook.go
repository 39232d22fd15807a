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

// Package v1alpha1 holds the admission webhooks of the s3gw-remediation
// API, served by the manager's webhook server.
package v1alpha1

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/template"
)

// The mutating webhook adds multiple-templates support to a template at
// admission, as SNR's and FAR's do, so that NHC's webhook accepts an
// escalation with several of our templates in the same apply. It ignores
// failures: a template admitted while the manager is down is annotated later
// by the template controller.
// +kubebuilder:webhook:path=/mutate-s3gw-remediation-medik8s-io-v1alpha1-s3gwremediationtemplate,mutating=true,failurePolicy=ignore,sideEffects=None,groups=s3gw-remediation.medik8s.io,resources=s3gwremediationtemplates,verbs=create;update,versions=v1alpha1,name=ms3gwremediationtemplate.kb.io,admissionReviewVersions=v1,timeoutSeconds=5

// TemplateDefaulter annotates S3GWRemediationTemplates.
type TemplateDefaulter struct{}

var _ admission.Defaulter[*s3gwv1alpha1.S3GWRemediationTemplate] = &TemplateDefaulter{}

// Default adds remediation.medik8s.io/multiple-templates-support: "true"
// unless the template carries it.
func (d *TemplateDefaulter) Default(ctx context.Context, t *s3gwv1alpha1.S3GWRemediationTemplate) error {
	if template.AddMultipleTemplatesSupport(t) {
		logf.FromContext(ctx).V(1).Info("Adding multiple-templates support to the template", "S3GWRemediationTemplate", t.Namespace+"/"+t.Name)
	}
	return nil
}

// SetupTemplateWebhookWithManager registers the webhook with the manager's
// webhook server.
func SetupTemplateWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &s3gwv1alpha1.S3GWRemediationTemplate{}).
		WithDefaulter(&TemplateDefaulter{}).
		Complete()
}
