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
	"github.com/medik8s/common/pkg/conditions"
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
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
)

// The marker of a delegate CR. The CR lives beside its template, usually
// in the fencer's namespace, where no owner reference to the remediation
// can reach (owner references do not cross namespaces): the label names the
// remediation that created it by UID, so its delegates are found again
// after a restart and deleted with it (the finalizer), and the admission
// policy (config/policy) lets the manager write only CRs that carry it; the
// annotation names it for people.
const (
	RemediationUIDLabel   = "s3gw-remediation.medik8s.io/remediation-uid"
	RemediationAnnotation = "s3gw-remediation.medik8s.io/remediation"
)

// DelegateError is a delegate configuration problem that retrying cannot fix.
type DelegateError struct{ Reason string }

func (e *DelegateError) Error() string { return e.Reason }

// Delegate is the fencing CR a remediation created from spec.fencing.delegate.
type Delegate struct {
	// Client writes, and reads through the manager's cache what a step
	// observes.
	Client client.Client
	// Live reads uncached what a write acts on: the delegates to delete or
	// mark timed out, whether one exists before another is created, and the
	// template to create it from.
	Live client.Reader
}

// DelegateKind is the kind of the CR a delegate template makes.
func DelegateKind(d *s3gwv1alpha1.DelegateFencing) (schema.GroupVersionKind, error) {
	gvk, err := Kind(d.APIVersion, strings.TrimSuffix(d.Kind, "Template"))
	if err != nil {
		return gvk, &DelegateError{err.Error()}
	}
	return gvk, nil
}

// TemplateKind is the kind of the delegate's template.
func TemplateKind(d *s3gwv1alpha1.DelegateFencing) (schema.GroupVersionKind, error) {
	return Kind(d.APIVersion, d.Kind)
}

// Namespace is where the delegate's template is read and its CR created:
// the template's namespace, as NHC creates a remediation CR beside its
// template (so FAR finds the Secrets the template names); empty means the
// remediation's own.
func Namespace(rem *s3gwv1alpha1.S3GWRemediation) string {
	if ns := rem.Spec.Fencing.Delegate.Namespace; ns != "" {
		return ns
	}
	return rem.Namespace
}

// created lists, uncached and in every namespace, the delegate CRs that
// carry the remediation's marker.
func (d Delegate) created(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation) ([]unstructured.Unstructured, error) {
	gvk, err := DelegateKind(rem.Spec.Fencing.Delegate)
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := d.Live.List(ctx, list, client.MatchingLabels{RemediationUIDLabel: string(rem.UID)}); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, &DelegateError{fmt.Sprintf("%s is not installed", gvk.Kind)}
		}
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	return list.Items, nil
}

// DelegateState is what a step sees of the delegate.
type DelegateState struct {
	// Own is the CR this remediation created, nil before it is created.
	Own *failover.RemediatorCR
	// Ref references Own.
	Ref *corev1.ObjectReference
	// Others are, while Own does not exist, the other CRs of the delegate
	// kind for the node, in any namespace: one NHC or another remediator
	// created for the same failure is reused instead of fencing twice.
	Others []failover.RemediatorCR
}

// Observe returns the remediation's delegate state. Its own CR is found by
// its marker, so it is found again after a restart; the cache is confirmed
// uncached before the step may decide to create one, so a cache that lags
// behind a create never makes a second. Before it exists, Observe lists the
// kind's other CRs for the node and checks that it can be created: a
// DelegateError says why not (a missing template, a name taken by a CR that
// is not ours).
func (d Delegate) Observe(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node string) (DelegateState, error) {
	spec := rem.Spec.Fencing.Delegate
	gvk, err := DelegateKind(spec)
	if err != nil {
		return DelegateState{}, err
	}
	crs, err := d.list(ctx, gvk)
	if err != nil {
		return DelegateState{}, err
	}
	var state DelegateState
	for i := range crs {
		cr := &crs[i]
		switch {
		case createdBy(cr, rem):
			state.own(cr, spec)
		case medik8s.NodeName(cr) == node && cr.GetDeletionTimestamp() == nil:
			state.Others = append(state.Others, *evidenceOf(cr, spec.ConditionTypeOrDefault()))
		}
	}
	if state.Own == nil && rem.UID != "" {
		created, err := d.created(ctx, rem)
		if err != nil {
			return DelegateState{}, err
		}
		if len(created) > 0 {
			state.own(&created[0], spec)
		}
	}
	if state.Own != nil {
		state.Others = nil
		return state, nil
	}
	return state, d.creatable(ctx, rem, node)
}

// own records cr as the remediation's own delegate.
func (s *DelegateState) own(cr *unstructured.Unstructured, spec *s3gwv1alpha1.DelegateFencing) {
	s.Own = evidenceOf(cr, spec.ConditionTypeOrDefault())
	s.Ref = &corev1.ObjectReference{APIVersion: cr.GetAPIVersion(), Kind: cr.GetKind(),
		Namespace: cr.GetNamespace(), Name: cr.GetName(), UID: cr.GetUID()}
}

// evidenceOf reads a fencing CR's proving condition.
func evidenceOf(cr *unstructured.Unstructured, condType string) *failover.RemediatorCR {
	e := &failover.RemediatorCR{Kind: cr.GetKind(), Name: cr.GetNamespace() + "/" + cr.GetName(),
		CreatedAt: cr.GetCreationTimestamp().Time}
	e.Fenced = ConditionTrue(cr, condType)
	e.Failure = Failure(cr)
	e.Succeeded = ConditionTrue(cr, conditions.SucceededType)
	conds, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions")
	e.Started = len(conds) > 0 || len(cr.GetFinalizers()) > 0
	return e
}

// createdBy reports whether obj carries the remediation's marker.
func createdBy(obj metav1.Object, rem *s3gwv1alpha1.S3GWRemediation) bool {
	return rem.UID != "" && obj.GetLabels()[RemediationUIDLabel] == string(rem.UID)
}

// list lists the delegate kind cluster-wide, from the cache.
func (d Delegate) list(ctx context.Context, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := d.Client.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, &DelegateError{fmt.Sprintf("%s is not installed", gvk.Kind)}
		}
		return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	return list.Items, nil
}

// MarkTimedOut copies NHC's timed-out annotation onto the delegate CRs, so
// the fencer stops too (FAR honours it). It is a no-op once it is there,
// and for a CR that succeeded (failover.RemediatorCR.MayTimeOut), judged on
// the CR it patches: the patch is locked on that version, so a success
// written in between makes it conflict and the step run again.
func (d Delegate) MarkTimedOut(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation) error {
	crs, err := d.created(ctx, rem)
	var invalid *DelegateError
	if errors.As(err, &invalid) {
		return nil
	}
	if err != nil {
		return err
	}
	for i := range crs {
		cr := &crs[i]
		if _, done := cr.GetAnnotations()[annotations.NhcTimedOut]; done {
			continue
		}
		if !evidenceOf(cr, rem.Spec.Fencing.Delegate.ConditionTypeOrDefault()).MayTimeOut() {
			continue
		}
		patch := client.MergeFromWithOptions(cr.DeepCopy(), client.MergeFromWithOptimisticLock{})
		anns := cr.GetAnnotations()
		if anns == nil {
			anns = map[string]string{}
		}
		anns[annotations.NhcTimedOut] = rem.Annotations[annotations.NhcTimedOut]
		cr.SetAnnotations(anns)
		if err := d.Client.Patch(ctx, cr, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("marking delegate %s %s/%s timed out: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
		}
	}
	return nil
}

// Create creates the fencing CR from the template the way NHC would
// (GenerateRemediationCRForNode in NHC's resources/manager.go): beside the
// template, named after the node (generateName if the template supports
// multiple templates, as FAR's and SNR's template webhooks make theirs),
// the node-name annotation, spec copied from spec.template.spec; with the
// remediation's marker instead of an owner reference. It returns the CR's
// namespace/name.
func (d Delegate) Create(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node string) (string, error) {
	spec := rem.Spec.Fencing.Delegate
	gvk, err := DelegateKind(spec)
	if err != nil {
		return "", err
	}
	template, templateSpec, err := d.template(ctx, d.Live, rem)
	if err != nil {
		return "", err
	}

	cr := &unstructured.Unstructured{Object: map[string]any{"spec": templateSpec}}
	cr.SetGroupVersionKind(gvk)
	cr.SetNamespace(template.GetNamespace())
	if _, multi := template.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]; multi {
		cr.SetGenerateName(node + "-")
	} else {
		cr.SetName(node)
	}
	// No template-name annotation: NHC matches "its" CRs by node-name and
	// template-name, whoever created them, so with it an NHC that also
	// references this template would create nothing, or fence twice.
	cr.SetAnnotations(map[string]string{annotations.NodeNameAnnotation: node,
		RemediationAnnotation: rem.Namespace + "/" + rem.Name})
	cr.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "s3gw-remediation",
		RemediationUIDLabel: string(rem.UID)})
	if err := d.Client.Create(ctx, cr); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return "", &DelegateError{fmt.Sprintf("a %s named %s/%s exists and was not created by this remediation",
				gvk.Kind, cr.GetNamespace(), node)}
		}
		return "", fmt.Errorf("creating %s for node %s in namespace %s: %w", gvk.Kind, node, cr.GetNamespace(), err)
	}
	return cr.GetNamespace() + "/" + cr.GetName(), nil
}

// template reads the delegate template and its spec.template.spec.
func (d Delegate) template(ctx context.Context, reader client.Reader, rem *s3gwv1alpha1.S3GWRemediation) (*unstructured.Unstructured, map[string]any, error) {
	spec := rem.Spec.Fencing.Delegate
	ns := Namespace(rem)
	template := &unstructured.Unstructured{}
	template.SetAPIVersion(spec.APIVersion)
	template.SetKind(spec.Kind)
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: spec.Name}, template); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, nil, &DelegateError{fmt.Sprintf("template %s %s/%s not found", spec.Kind, ns, spec.Name)}
		}
		return nil, nil, fmt.Errorf("getting template %s %s/%s: %w", spec.Kind, ns, spec.Name, err)
	}
	templateSpec, found, err := unstructured.NestedMap(template.Object, "spec", "template", "spec")
	if err != nil || !found {
		return nil, nil, &DelegateError{fmt.Sprintf("template %s %s/%s has no spec.template.spec", spec.Kind, ns, spec.Name)}
	}
	return template, templateSpec, nil
}

// creatable returns a DelegateError when the delegate cannot be created.
func (d Delegate) creatable(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation, node string) error {
	template, _, err := d.template(ctx, d.Client, rem)
	if err != nil {
		return err
	}
	if _, multi := template.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]; multi {
		return nil // generated names never collide
	}
	gvk, err := DelegateKind(rem.Spec.Fencing.Delegate)
	if err != nil {
		return err
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(gvk)
	key := client.ObjectKey{Namespace: template.GetNamespace(), Name: node}
	err = d.Client.Get(ctx, key, existing)
	switch {
	case err == nil:
		return &DelegateError{fmt.Sprintf("a %s named %s exists and was not created by this remediation", gvk.Kind, key)}
	case apierrors.IsNotFound(err):
		return nil
	default:
		return fmt.Errorf("getting %s %s: %w", gvk.Kind, key, err)
	}
}

// Delete deletes every delegate CR carrying the remediation's marker, in
// any namespace. Repeated, or after a crash at any point, it finds what is
// left and deletes that; a CR already gone or replaced is not an error.
func (d Delegate) Delete(ctx context.Context, rem *s3gwv1alpha1.S3GWRemediation) error {
	crs, err := d.created(ctx, rem)
	var invalid *DelegateError
	if errors.As(err, &invalid) {
		return nil // nothing of an invalid or uninstalled kind was created
	}
	if err != nil {
		return err
	}
	for i := range crs {
		cr := &crs[i]
		if cr.GetDeletionTimestamp() != nil {
			continue // the fencer's finalizer holds it
		}
		if err := d.Client.Delete(ctx, cr, client.Preconditions{UID: ptr.To(cr.GetUID())}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting delegate %s %s/%s: %w", cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
		}
	}
	return nil
}
