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

package prepull

import (
	"cmp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Plan is what brings the pre-pull DaemonSets in line with the gateways.
// Its DaemonSets are its own, to write: neither the cache's nor shared
// with another pass.
type Plan struct {
	// Create are DaemonSets to create.
	Create []*appsv1.DaemonSet
	// Update are desired DaemonSets that replace the existing ones of the
	// same name, with their UID. They carry no resourceVersion: the
	// DaemonSet controller writes their status all the time, which a lock
	// on the version read would lose to, and what the operator writes is
	// the whole of what it owns, so an update that raced another writes
	// the same.
	Update []*appsv1.DaemonSet
	// Delete are existing DaemonSets no gateway wants any more.
	Delete []*appsv1.DaemonSet
}

// Empty reports whether the plan writes nothing.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// PlanChanges compares the desired DaemonSets with the existing ones (all
// labelled Label; read only) by their spec hash, and builds those it
// writes. keep names those of gateways between pods (no Home): they stay
// as they are. A DaemonSet being deleted is waited for: its successor is
// created once it is gone.
func PlanChanges(desired []Desired, keep map[types.NamespacedName]bool, existing []*appsv1.DaemonSet) Plan {
	live := make(map[types.NamespacedName]*appsv1.DaemonSet, len(existing))
	for _, ds := range existing {
		live[types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name}] = ds
	}
	var p Plan
	wanted := make(map[types.NamespacedName]bool, len(desired))
	for _, d := range desired {
		wanted[d.NamespacedName] = true
		cur, ok := live[d.NamespacedName]
		switch {
		case !ok:
			p.Create = append(p.Create, d.Build())
		case cur.DeletionTimestamp != nil:
		case cur.Annotations[SpecHashAnnotation] != d.Hash:
			next := d.Build()
			next.UID = cur.UID
			p.Update = append(p.Update, next)
		}
	}
	for key, ds := range live {
		if !wanted[key] && !keep[key] && ds.DeletionTimestamp == nil {
			p.Delete = append(p.Delete, ds.DeepCopy())
		}
	}
	byKey := func(a, b *appsv1.DaemonSet) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	}
	slices.SortFunc(p.Create, byKey)
	slices.SortFunc(p.Update, byKey)
	slices.SortFunc(p.Delete, byKey)
	return p
}

// WantedByAny reports whether one of the templates that wanted a
// DaemonSet (TemplatesAnnotation) is among enabled (namespace/name): then a
// DaemonSet no gateway pod wants now may be a gateway between two pods (a
// failover's force delete before the ReplicaSet's replacement, a rollout)
// rather than gone, and is kept for a grace; otherwise pre-pull was turned
// off or the template went, and it is deleted at once.
func WantedByAny(ds *appsv1.DaemonSet, enabled map[string]bool) bool {
	for _, t := range strings.Split(ds.Annotations[TemplatesAnnotation], ",") {
		if t != "" && enabled[t] {
			return true
		}
	}
	return false
}
