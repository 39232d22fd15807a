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

	"github.com/medik8s/common/pkg/annotations"
	"github.com/medik8s/common/pkg/conditions"
	"github.com/medik8s/common/pkg/labels"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Contract constants NHC uses that medik8s/common does not export.
const (
	TemplateNameAnnotation = "remediation.medik8s.io/template-name"
	PartOfLabel            = "app.kubernetes.io/part-of"
	PartOfValue            = "node-healthcheck-controller"
	ControlPlaneLabel      = "remediation.medik8s.io/isControlPlaneNode"
	LeaseNamespace         = "medik8s-leases"
	// DefaultTimeout is NHC's classic remediation timeout; the lease lasts
	// it plus a minute, and a CR times out after three of them.
	DefaultTimeout = 10 * time.Minute
)

// NodeHealthCheckGVK is NHC's cluster-scoped CR.
var NodeHealthCheckGVK = schema.GroupVersionKind{Group: "remediation.medik8s.io", Version: "v1alpha1", Kind: "NodeHealthCheck"}

// TemplateRef names the remediation template a NodeHealthCheck references.
type TemplateRef struct {
	APIVersion, Kind, Namespace, Name string
}

// RemediationGVK is the template's group and version with "Template" trimmed.
func (t TemplateRef) RemediationGVK() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(t.APIVersion, strings.TrimSuffix(t.Kind, "Template"))
}

// Emulator plays one NodeHealthCheck.
type Emulator struct {
	// Client is NHC's client; tests impersonate NHC's service account bound
	// to the operator's aggregation ClusterRole, so a missing verb fails.
	Client   client.Client
	Name     string
	Template TemplateRef
	Clock    clock.PassiveClock
	// Timeout is the remediation timeout; zero means DefaultTimeout.
	Timeout time.Duration

	uid types.UID
}

func (e *Emulator) timeout() time.Duration {
	if e.Timeout > 0 {
		return e.Timeout
	}
	return DefaultTimeout
}

func (e *Emulator) holder() string { return "NodeHealthCheck-" + e.Name }

// CreateNodeHealthCheck creates the NodeHealthCheck object that owns the CRs
// (or adopts an existing one) and remembers its UID. adminClient needs rights
// on nodehealthchecks, which NHC's aggregated role does not grant.
func (e *Emulator) CreateNodeHealthCheck(ctx context.Context, adminClient client.Client) error {
	nhcObj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"selector": map[string]any{},
		"remediationTemplate": map[string]any{
			"apiVersion": e.Template.APIVersion, "kind": e.Template.Kind,
			"namespace": e.Template.Namespace, "name": e.Template.Name,
		},
	}}}
	nhcObj.SetGroupVersionKind(NodeHealthCheckGVK)
	nhcObj.SetName(e.Name)
	if err := adminClient.Create(ctx, nhcObj); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating NodeHealthCheck %s: %w", e.Name, err)
		}
		if err := adminClient.Get(ctx, client.ObjectKey{Name: e.Name}, nhcObj); err != nil {
			return fmt.Errorf("getting NodeHealthCheck %s: %w", e.Name, err)
		}
	}
	e.uid = nhcObj.GetUID()
	return nil
}

func (e *Emulator) newList() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	gvk := e.Template.RemediationGVK()
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return list
}

func (e *Emulator) owns(obj client.Object) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind == NodeHealthCheckGVK.Kind && ref.APIVersion == NodeHealthCheckGVK.GroupVersion().String() && ref.Name == e.Name {
			return true
		}
	}
	return false
}

// ForNode lists the CRs this NodeHealthCheck owns for the node, matched by
// the node-name annotation or the name, as NHC does.
func (e *Emulator) ForNode(ctx context.Context, node string) ([]unstructured.Unstructured, error) {
	list := e.newList()
	if err := e.Client.List(ctx, list, client.InNamespace(e.Template.Namespace)); err != nil {
		return nil, fmt.Errorf("listing remediations: %w", err)
	}
	var out []unstructured.Unstructured
	for _, cr := range list.Items {
		name := cr.GetAnnotations()[annotations.NodeNameAnnotation]
		if (name == node || cr.GetName() == node) && e.owns(&cr) {
			out = append(out, cr)
		}
	}
	return out, nil
}

// Remediate creates the remediation CR for an unhealthy node unless one
// exists, the node is excluded, or its lease is held by someone else. It
// returns the CR (existing or new), or nil when skipped.
func (e *Emulator) Remediate(ctx context.Context, node *corev1.Node) (*unstructured.Unstructured, error) {
	if node.Labels[labels.ExcludeFromRemediation] == "true" {
		return nil, nil
	}
	if held, err := e.takeLease(ctx, node.Name); err != nil || !held {
		return nil, err
	}
	existing, err := e.ForNode(ctx, node.Name)
	if err != nil {
		return nil, err
	}
	for i := range existing {
		if existing[i].GetAnnotations()[TemplateNameAnnotation] == e.Template.Name || existing[i].GetName() == node.Name {
			return &existing[i], nil
		}
	}

	template := &unstructured.Unstructured{}
	template.SetAPIVersion(e.Template.APIVersion)
	template.SetKind(e.Template.Kind)
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: e.Template.Namespace, Name: e.Template.Name}, template); err != nil {
		return nil, fmt.Errorf("getting template %s/%s: %w", e.Template.Namespace, e.Template.Name, err)
	}
	spec, found, err := unstructured.NestedMap(template.Object, "spec", "template", "spec")
	if err != nil || !found {
		return nil, fmt.Errorf("template %s has no spec.template.spec", e.Template.Name)
	}

	cr := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	cr.SetGroupVersionKind(e.Template.RemediationGVK())
	cr.SetNamespace(e.Template.Namespace)
	if _, multi := template.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]; multi {
		cr.SetGenerateName(node.Name + "-")
	} else {
		cr.SetName(node.Name)
	}
	cr.SetAnnotations(map[string]string{
		annotations.NodeNameAnnotation: node.Name,
		TemplateNameAnnotation:         e.Template.Name,
	})
	crLabels := map[string]string{PartOfLabel: PartOfValue}
	if isControlPlane(node) {
		crLabels[ControlPlaneLabel] = ""
	}
	cr.SetLabels(crLabels)
	cr.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: NodeHealthCheckGVK.GroupVersion().String(), Kind: NodeHealthCheckGVK.Kind,
		Name: e.Name, UID: e.uid, Controller: ptr.To(false),
	}})
	if err := e.Client.Create(ctx, cr); err != nil {
		return nil, fmt.Errorf("creating remediation for node %s: %w", node.Name, err)
	}
	return cr, nil
}

func isControlPlane(node *corev1.Node) bool {
	_, cp := node.Labels[labels.ControlPlaneRole]
	_, master := node.Labels[labels.MasterRole]
	return cp || master
}

// takeLease takes or renews lease node-<node> for this NodeHealthCheck;
// false when another holder has it.
func (e *Emulator) takeLease(ctx context.Context, node string) (bool, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: LeaseNamespace}}
	if err := e.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return false, fmt.Errorf("creating namespace %s: %w", LeaseNamespace, err)
	}
	now := metav1.NewMicroTime(e.Clock.Now())
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: LeaseNamespace, Name: "node-" + node}}
	err := e.Client.Get(ctx, client.ObjectKeyFromObject(lease), lease)
	switch {
	case apierrors.IsNotFound(err):
		lease.Spec = coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(e.holder()),
			LeaseDurationSeconds: ptr.To(int32((e.timeout() + time.Minute).Seconds())),
			AcquireTime:          &now, RenewTime: &now,
		}
		if err := e.Client.Create(ctx, lease); err != nil {
			return false, fmt.Errorf("creating lease %s: %w", lease.Name, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("getting lease %s: %w", lease.Name, err)
	}
	return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity == e.holder(), nil
}

// Lease returns the node's lease, for tests asserting nobody else changed it.
func (e *Emulator) Lease(ctx context.Context, node string) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := e.Client.Get(ctx, client.ObjectKey{Namespace: LeaseNamespace, Name: "node-" + node}, lease)
	return lease, err
}

// Succeeded reads what NHC reads: the Succeeded condition's status, or "".
func Succeeded(cr *unstructured.Unstructured) metav1.ConditionStatus {
	conds, _, _ := unstructured.NestedSlice(cr.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == conditions.SucceededType {
			s, _ := m["status"].(string)
			return metav1.ConditionStatus(s)
		}
	}
	return ""
}

// TimeOut adds the nhc-timed-out annotation with a full metadata Update
// (resourceVersion included, so conflicts surface as in NHC). It refuses,
// as NHC does, while Succeeded=True.
func (e *Emulator) TimeOut(ctx context.Context, cr *unstructured.Unstructured) error {
	if err := e.Client.Get(ctx, client.ObjectKeyFromObject(cr), cr); err != nil {
		return fmt.Errorf("getting remediation %s: %w", cr.GetName(), err)
	}
	if Succeeded(cr) == metav1.ConditionTrue {
		return nil
	}
	ann := cr.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotations.NhcTimedOut] = e.Clock.Now().UTC().Format(time.RFC3339)
	cr.SetAnnotations(ann)
	if err := e.Client.Update(ctx, cr); err != nil {
		return fmt.Errorf("marking remediation %s timed out: %w", cr.GetName(), err)
	}
	return nil
}

// LeaseOverdue reports whether classic-mode NHC would time the node's CR
// out now: acquireTime + 3 × timeout has passed.
func (e *Emulator) LeaseOverdue(ctx context.Context, node string) (bool, error) {
	lease, err := e.Lease(ctx, node)
	if err != nil || lease.Spec.AcquireTime == nil {
		return false, client.IgnoreNotFound(err)
	}
	return e.Clock.Since(lease.Spec.AcquireTime.Time) > 3*e.timeout(), nil
}

// NodeHealthy deletes every CR this NodeHealthCheck owns for the node, with
// a plain Delete that leaves finalizers to the operator. It returns how many
// CRs remain (terminating); NHC counts the node healthy, and releases the
// lease, only once that is zero.
func (e *Emulator) NodeHealthy(ctx context.Context, node string) (int, error) {
	crs, err := e.ForNode(ctx, node)
	if err != nil {
		return 0, err
	}
	for i := range crs {
		if crs[i].GetDeletionTimestamp() != nil {
			continue
		}
		if err := e.Client.Delete(ctx, &crs[i]); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("deleting remediation %s: %w", crs[i].GetName(), err)
		}
	}
	remaining, err := e.ForNode(ctx, node)
	if err != nil {
		return 0, err
	}
	if len(remaining) == 0 {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: LeaseNamespace, Name: "node-" + node}}
		if err := e.Client.Delete(ctx, lease); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("releasing lease of node %s: %w", node, err)
		}
	}
	return len(remaining), nil
}

// NodeDeleted deletes the node's CRs at once, as NHC does for a node that
// no longer exists (CRs expecting permanent deletion wait for Succeeded=True).
func (e *Emulator) NodeDeleted(ctx context.Context, node string) (int, error) {
	return e.NodeHealthy(ctx, node)
}
