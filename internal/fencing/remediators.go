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
	"fmt"
	"slices"
	"strings"

	"github.com/medik8s/common/pkg/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// Remediators finds, in every namespace, the CRs of the listed kinds that
// remediate node, and whether each one's proving condition is True. A kind
// whose CRD is not installed contributes nothing; one whose apiVersion does
// not parse is reported in invalid (by kind) and the others still count.
func Remediators(ctx context.Context, reader client.Reader, listed []s3gwv1alpha1.RemediatorEvidence, node string) (
	out []failover.RemediatorCR, invalid map[string]string, err error) {
	for _, l := range listed {
		gvk, err := Kind(l.APIVersion, l.Kind+"List")
		if err != nil {
			if invalid == nil {
				invalid = map[string]string{}
			}
			invalid[l.Kind] = err.Error()
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := reader.List(ctx, list); err != nil {
			switch {
			case meta.IsNoMatchError(err):
				continue // not installed: no evidence
			case apierrors.IsForbidden(err):
				// Missing RBAC for an extra kind must not block other evidence.
				logf.FromContext(ctx).Error(err, "Cannot list remediator CRs; grant the manager list on them", "kind", l.Kind)
				continue
			}
			return nil, nil, fmt.Errorf("listing %s: %w", l.Kind, err)
		}
		for i := range list.Items {
			item := &list.Items[i]
			if medik8s.NodeName(item) != node || item.GetDeletionTimestamp() != nil {
				continue
			}
			cr := failover.RemediatorCR{Kind: l.Kind, Name: item.GetNamespace() + "/" + item.GetName(),
				CreatedAt: item.GetCreationTimestamp().Time}
			cr.Fenced = ConditionTrue(item, l.ConditionTypeOrDefault())
			cr.Failure = Failure(item)
			out = append(out, cr)
		}
	}
	return out, invalid, nil
}

// RemediatorKinds are the GroupVersionKinds of the listed remediators whose
// apiVersion parses.
func RemediatorKinds(listed []s3gwv1alpha1.RemediatorEvidence) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, l := range listed {
		if gvk, err := Kind(l.APIVersion, l.Kind); err == nil {
			out = append(out, gvk)
		}
	}
	return out
}

// ConditionTrue reports whether status.conditions holds condType=True. Its
// lastTransitionTime is not read: the fencer's clock is not one the gate
// trusts (failover.EvidenceSighting).
func ConditionTrue(obj *unstructured.Unstructured, condType string) bool {
	c, found := findCondition(obj, condType)
	return found && c.status == metav1.ConditionTrue
}

// Failure reads the CR's Succeeded=False, the medik8s contract's word for
// a remediator that gave up (FAR's UpdateConditions in
// pkg/utils/conditions.go sets it once its agent failed every attempt, and
// never acts on the CR again): its reason and message; "" while it has not.
// When it gave up is the controller's own sighting, never the fencer's
// lastTransitionTime (failover.EvidenceSighting).
func Failure(obj *unstructured.Unstructured) string {
	c, found := findCondition(obj, conditions.SucceededType)
	if !found || c.status != metav1.ConditionFalse {
		return ""
	}
	why := c.reason
	if c.message != "" {
		why += ": " + c.message
	}
	return why
}

// condition is what the fencing adapters read of a CR's status condition.
type condition struct {
	status          metav1.ConditionStatus
	reason, message string
}

func findCondition(obj *unstructured.Unstructured, condType string) (condition, bool) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != condType {
			continue
		}
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		message, _ := m["message"].(string)
		return condition{status: metav1.ConditionStatus(status), reason: reason, message: message}, true
	}
	return condition{}, false
}

// NodeFencers reads, from reader, the CRs of the fencing kinds a spec counts
// (the listed remediators and the delegate's kind, whoever created them)
// that remediate a node, so that a replica node fenced itself counts as
// unreachable (failover.ReplicaNode.Fence).
func NodeFencers(reader client.Reader) storage.Fencers {
	return func(ctx context.Context, spec s3gwv1alpha1.S3GWRemediationSpec, node string) ([]failover.RemediatorCR, error) {
		listed := spec.Fencing.Remediators
		if d := spec.Fencing.Delegate; d != nil {
			listed = append(slices.Clip(listed), s3gwv1alpha1.RemediatorEvidence{APIVersion: d.APIVersion,
				Kind: strings.TrimSuffix(d.Kind, "Template"), ConditionType: d.ConditionTypeOrDefault()})
		}
		crs, _, err := Remediators(ctx, reader, listed, node)
		return crs, err
	}
}
