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

package template

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/template"
)

// Reconciler adds remediation.medik8s.io/multiple-templates-support to
// every S3GWRemediationTemplate that lacks it. The mutating webhook
// (internal/webhook/v1alpha1) adds it at admission, which NHC's webhook needs
// when templates and NodeHealthCheck are applied together; this controller
// is the fallback for templates admitted without it: while the manager (and
// so the webhook, whose failure policy is Ignore) was down, or with an
// install that serves no webhook (config/default without cert-manager).
type Reconciler struct {
	Client client.Client
}

// NHC watches templates and lists them for its webhook; we annotate them, and
// create the default template at start-up (internal/template.Creator).
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediationtemplates,verbs=get;list;watch;create;patch

// Reconcile adds the annotation if it is missing.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &s3gwv1alpha1.S3GWRemediationTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patch := client.MergeFrom(t.DeepCopy())
	if !template.AddMultipleTemplatesSupport(t) {
		return ctrl.Result{}, nil
	}
	logf.FromContext(ctx).Info("Annotating template for multiple-templates support")
	if err := r.Client.Patch(ctx, t, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("annotating S3GWRemediationTemplate %s: %w", req.NamespacedName, err)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler; it only wakes for templates
// that still lack the annotation.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&s3gwv1alpha1.S3GWRemediationTemplate{}, builder.WithPredicates(predicate.NewPredicateFuncs(
			func(obj client.Object) bool { return !template.HasMultipleTemplatesSupport(obj) }))).
		Named("s3gwremediationtemplate").
		Complete(r)
}
