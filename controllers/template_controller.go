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

package controllers

import (
	"context"
	"fmt"

	"github.com/medik8s/common/pkg/annotations"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// TemplateReconciler adds remediation.medik8s.io/multiple-templates-support to
// every S3GWRemediationTemplate. With it NHC names CRs "<node>-<random>", so
// one node can have CRs from several of our templates (escalation, or two
// NodeHealthChecks), as medik8s remediators do with a mutating webhook.
type TemplateReconciler struct {
	client.Client
}

// NHC watches templates and lists them for its webhook; we only annotate them.
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediationtemplates,verbs=get;list;watch;patch

// Reconcile adds the annotation if it is missing.
func (r *TemplateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	template := &s3gwv1alpha1.S3GWRemediationTemplate{}
	if err := r.Get(ctx, req.NamespacedName, template); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if hasMultipleTemplatesSupport(template) {
		return ctrl.Result{}, nil
	}
	logf.FromContext(ctx).Info("Annotating template for multiple-templates support")
	patch := client.MergeFrom(template.DeepCopy())
	if template.Annotations == nil {
		template.Annotations = map[string]string{}
	}
	template.Annotations[annotations.MultipleTemplatesSupportedAnnotation] = "true"
	if err := r.Patch(ctx, template, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("annotating S3GWRemediationTemplate %s: %w", req.NamespacedName, err)
	}
	return ctrl.Result{}, nil
}

func hasMultipleTemplatesSupport(obj client.Object) bool {
	_, ok := obj.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]
	return ok
}

// SetupWithManager registers the reconciler; it only wakes for templates
// that still lack the annotation.
func (r *TemplateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&s3gwv1alpha1.S3GWRemediationTemplate{}, builder.WithPredicates(predicate.NewPredicateFuncs(
			func(obj client.Object) bool { return !hasMultipleTemplatesSupport(obj) }))).
		Named("s3gwremediationtemplate").
		Complete(r)
}
