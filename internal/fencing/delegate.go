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

package fencing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// TemplateNameAnnotation is the annotation NHC puts on the CRs it creates.
const TemplateNameAnnotation = "remediation.medik8s.io/template-name"

// DelegateError is a delegate configuration problem that retrying cannot fix.
type DelegateError struct{ Reason string }

func (e *DelegateError) Error() string { return e.Reason }

// Delegate is the fencing CR a remediation created from spec.fencing.delegate.
type Delegate struct {
	Client client.Client
	Reader client.Reader
}

func delegateGVK(d *s3gwv1alpha1.DelegateFencing) (schema.GroupVersionKind, error) {
	gv, err := schema.ParseGroupVersion(d.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, &DelegateError{fmt.Sprintf("invalid apiVersion %q: %v", d.APIVersion, err)}
	}
	return gv.WithKind(strings.TrimSuffix(d.Kind, "Template")), nil
}

// Find returns the delegate CR owned by the remediation, or nil.
func (d Delegate) Find(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation) (*unstructured.Unstructured, error) {
	gvk, err := delegateGVK(rem.Spec.Fencing.Delegate)
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := d.Reader.List(ctx, list, client.InNamespace(rem.Namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, &DelegateError{fmt.Sprintf("%s is not installed", gvk.Kind)}
		}
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].GetOwnerReferences() {
			if ref.UID == rem.UID {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// Observe returns the remediation's delegate CR and whether its proving
// condition is True; nil when it has not been created yet. The CR is found
// by its owner reference, so it is found again after a restart. Before it
// exists, Observe checks that it can be created: a DelegateError says why
// not (a missing template, a name taken by a CR that is not ours).
func (d Delegate) Observe(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node string) (*failover.RemediatorCR, *corev1.ObjectReference, error) {
	spec := rem.Spec.Fencing.Delegate
	if spec.Namespace != "" && spec.Namespace != rem.Namespace {
		return nil, nil, &DelegateError{fmt.Sprintf("delegate.namespace %q must be the remediation's namespace %q: the created CR is owned by it",
			spec.Namespace, rem.Namespace)}
	}
	cr, err := d.Find(ctx, rem)
	if err != nil {
		return nil, nil, err
	}
	if cr == nil {
		return nil, nil, d.creatable(ctx, rem, node)
	}
	state := &failover.RemediatorCR{Kind: cr.GetKind(), Name: cr.GetName()}
	state.Fenced, state.FencedAt = ConditionTrue(cr, conditionType(spec.ConditionType))
	ref := &corev1.ObjectReference{APIVersion: cr.GetAPIVersion(), Kind: cr.GetKind(),
		Namespace: cr.GetNamespace(), Name: cr.GetName(), UID: cr.GetUID()}
	return state, ref, nil
}

// Create creates the fencing CR from the template the way NHC would: name
// (or generateName, if the template supports multiple templates) after the
// node, node-name and template-name annotations, spec copied from
// spec.template.spec; owned by the remediation. It returns the CR's name.
func (d Delegate) Create(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node string) (string, error) {
	spec := rem.Spec.Fencing.Delegate
	gvk, err := delegateGVK(spec)
	if err != nil {
		return "", err
	}
	template, templateSpec, err := d.template(ctx, rem)
	if err != nil {
		return "", err
	}

	cr := &unstructured.Unstructured{Object: map[string]any{"spec": templateSpec}}
	cr.SetGroupVersionKind(gvk)
	cr.SetNamespace(rem.Namespace)
	if _, multi := template.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]; multi {
		cr.SetGenerateName(node + "-")
	} else {
		cr.SetName(node)
	}
	cr.SetAnnotations(map[string]string{
		annotations.NodeNameAnnotation: node,
		TemplateNameAnnotation:         spec.Name,
	})
	cr.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "s3gw-remediation"})
	cr.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: s3gwv1alpha1.GroupVersion.String(), Kind: "S3GWRemediation",
		Name: rem.Name, UID: rem.UID, Controller: ptr.To(true),
	}})
	if err := d.Client.Create(ctx, cr); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return "", &DelegateError{fmt.Sprintf("a %s named %s exists and is not owned by this remediation", gvk.Kind, node)}
		}
		return "", fmt.Errorf("creating %s for node %s: %w", gvk.Kind, node, err)
	}
	return cr.GetName(), nil
}

// template reads the delegate template and its spec.template.spec.
func (d Delegate) template(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation) (*unstructured.Unstructured, map[string]any, error) {
	spec := rem.Spec.Fencing.Delegate
	template := &unstructured.Unstructured{}
	template.SetAPIVersion(spec.APIVersion)
	template.SetKind(spec.Kind)
	if err := d.Reader.Get(ctx, client.ObjectKey{Namespace: rem.Namespace, Name: spec.Name}, template); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, nil, &DelegateError{fmt.Sprintf("template %s %s/%s not found", spec.Kind, rem.Namespace, spec.Name)}
		}
		return nil, nil, fmt.Errorf("getting template %s %s/%s: %w", spec.Kind, rem.Namespace, spec.Name, err)
	}
	templateSpec, found, err := unstructured.NestedMap(template.Object, "spec", "template", "spec")
	if err != nil || !found {
		return nil, nil, &DelegateError{fmt.Sprintf("template %s/%s has no spec.template.spec", spec.Kind, spec.Name)}
	}
	return template, templateSpec, nil
}

// creatable returns a DelegateError when the delegate cannot be created.
func (d Delegate) creatable(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node string) error {
	template, _, err := d.template(ctx, rem)
	if err != nil {
		return err
	}
	if _, multi := template.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]; multi {
		return nil // generated names never collide
	}
	gvk, err := delegateGVK(rem.Spec.Fencing.Delegate)
	if err != nil {
		return err
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(gvk)
	err = d.Reader.Get(ctx, client.ObjectKey{Namespace: rem.Namespace, Name: node}, existing)
	switch {
	case err == nil:
		return &DelegateError{fmt.Sprintf("a %s named %s exists and is not owned by this remediation", gvk.Kind, node)}
	case apierrors.IsNotFound(err):
		return nil
	default:
		return fmt.Errorf("getting %s %s: %w", gvk.Kind, node, err)
	}
}

// Delete deletes the remediation's delegate CR, if any.
func (d Delegate) Delete(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation) error {
	cr, err := d.Find(ctx, rem)
	var invalid *DelegateError
	if errors.As(err, &invalid) {
		return nil // nothing of an invalid or uninstalled kind was created
	}
	if err != nil || cr == nil {
		return err
	}
	if err := d.Client.Delete(ctx, cr, client.Preconditions{UID: ptr.To(cr.GetUID())}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting delegate %s %s: %w", cr.GetKind(), cr.GetName(), err)
	}
	return nil
}
