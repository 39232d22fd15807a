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

package workloads

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Covered reports whether every pod the spec's selector matches is also
// matched by cached, the selector the manager caches pods by: only then may
// its pods be read from the cache (a pod outside it would look absent).
func Covered(spec s3gwv1alpha1.S3GWRemediationSpec, cached labels.Selector) bool {
	if cached == nil || cached.Empty() {
		return true
	}
	reqs, selectable := cached.Requirements()
	if !selectable {
		return false
	}
	sel := spec.WorkloadSelectorOrDefault()
	for _, r := range reqs {
		if !implies(sel, r) {
			return false
		}
	}
	return true
}

// implies reports whether every pod sel matches satisfies r, judged from
// sel's own terms: an equality or In on r's key within r's values, or, for
// an Exists, any term that needs the key.
func implies(sel *metav1.LabelSelector, r labels.Requirement) bool {
	allowed := r.Values()
	switch r.Operator() {
	case selection.Equals, selection.DoubleEquals, selection.In:
		if v, ok := sel.MatchLabels[r.Key()]; ok && allowed.Has(v) {
			return true
		}
		for _, e := range sel.MatchExpressions {
			if e.Key == r.Key() && e.Operator == metav1.LabelSelectorOpIn && len(e.Values) > 0 &&
				!slices.ContainsFunc(e.Values, func(v string) bool { return !allowed.Has(v) }) {
				return true
			}
		}
	case selection.Exists:
		if _, ok := sel.MatchLabels[r.Key()]; ok {
			return true
		}
		for _, e := range sel.MatchExpressions {
			if e.Key == r.Key() && (e.Operator == metav1.LabelSelectorOpIn || e.Operator == metav1.LabelSelectorOpExists) {
				return true
			}
		}
	}
	return false
}
