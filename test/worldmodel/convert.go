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

package worldmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// copyInto copies a stored object into a caller's object of either
// representation.
func copyInto(gvk schema.GroupVersionKind, stored client.Object, out runtime.Object) error {
	su, storedUnstructured := stored.(*unstructured.Unstructured)
	switch o := out.(type) {
	case *unstructured.Unstructured:
		if storedUnstructured {
			o.Object = runtime.DeepCopyJSON(su.Object)
			return nil
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(stored)
		if err != nil {
			return err
		}
		o.Object = m
		o.SetGroupVersionKind(gvk)
		return nil
	default:
		if storedUnstructured {
			return runtime.DefaultUnstructuredConverter.FromUnstructured(su.Object, out)
		}
		dst, src := reflect.ValueOf(out), reflect.ValueOf(stored.DeepCopyObject())
		if dst.Type() != src.Type() {
			return fmt.Errorf("worldmodel: reading %s into %T", gvk.Kind, out)
		}
		dst.Elem().Set(src.Elem())
		return nil
	}
}

func copyOut(gvk schema.GroupVersionKind, obj client.Object, asUnstructured bool) (runtime.Object, error) {
	if !asUnstructured {
		return obj.DeepCopyObject(), nil
	}
	u := &unstructured.Unstructured{}
	return u, copyInto(gvk, obj, u)
}

// toMap is an object's JSON form, the form API writes are computed in.
func toMap(obj runtime.Object) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, json.Unmarshal(data, &m)
}

// fromMap decodes the stored representation of a kind: typed when the
// scheme knows it, unstructured otherwise.
func fromMap(gvk schema.GroupVersionKind, m map[string]any) (client.Object, error) {
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if scheme.Recognizes(gvk) {
		obj, err := scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, obj); err != nil {
			return nil, err
		}
		return obj.(client.Object), nil
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(data)
}

// applyMergePatch applies an RFC 7386 JSON merge patch to a stored object.
func applyMergePatch(stored client.Object, patch []byte) (map[string]any, error) {
	current, err := toMap(stored)
	if err != nil {
		return nil, err
	}
	var p any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	merged, ok := mergePatch(current, p).(map[string]any)
	if !ok {
		return nil, errors.New("merge patch is not an object")
	}
	return merged, nil
}

func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// identityFields are the metadata fields no write may change.
var identityFields = []string{"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
	"deletionGracePeriodSeconds", "generation", "resourceVersion", "generateName"}

// restrict builds the object a write stores: the request's content with
// the stored identity, and only the part its subresource may change. Both
// maps are the caller's own (fresh from JSON) and are reused.
func restrict(current, desired map[string]any, info kindInfo, subresource string) map[string]any {
	if subresource == fieldStatus {
		next := shallowCopy(current)
		setOrDelete(next, fieldStatus, desired[fieldStatus])
		return next
	}
	next := desired
	meta, _ := next["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		next["metadata"] = meta
	}
	currentMeta, _ := current["metadata"].(map[string]any)
	for _, f := range identityFields {
		setOrDelete(meta, f, currentMeta[f])
	}
	if info.status {
		setOrDelete(next, fieldStatus, current[fieldStatus])
	}
	if !reflect.DeepEqual(current[fieldSpec], next[fieldSpec]) {
		generation, _ := meta["generation"].(float64)
		meta["generation"] = generation + 1
	}
	return next
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func setOrDelete(m map[string]any, key string, v any) {
	if v == nil {
		delete(m, key)
		return
	}
	m[key] = v
}

// checkFinalizers refuses new finalizers on an object being deleted.
func checkFinalizers(gvk schema.GroupVersionKind, stored client.Object, next map[string]any) error {
	if stored.GetDeletionTimestamp() == nil {
		return nil
	}
	finalizers, _, _ := unstructured.NestedStringSlice(next, "metadata", "finalizers")
	for _, f := range finalizers {
		if !slices.Contains(stored.GetFinalizers(), f) {
			return apierrors.NewForbidden(resourceName(gvk), stored.GetName(),
				errors.New("no new finalizers can be added if the object is being deleted"))
		}
	}
	return nil
}

// equalIgnoringVersion compares a stored object with a write's result;
// next already carries the stored resourceVersion (restrict keeps it).
func equalIgnoringVersion(current, next map[string]any) bool {
	if len(current) != len(next) {
		return false
	}
	for k, v := range current {
		if k == "apiVersion" || k == "kind" {
			continue
		}
		if !reflect.DeepEqual(v, next[k]) {
			return false
		}
	}
	return true
}

// admit is what create stores: the scheme's representation, without
// status for custom resources, with the CRD's defaults applied.
func admit(gvk schema.GroupVersionKind, obj client.Object) (client.Object, error) {
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	if gvk.Group != "" && gvk.Group != "apps" && gvk.Group != "storage.k8s.io" && gvk.Group != "coordination.k8s.io" {
		delete(m, fieldStatus)
	}
	if gvk == gvkRemediation {
		applyDefaults(m, remediationSchema())
	}
	return fromMap(gvk, m)
}

func secondsDuration(s int64) time.Duration { return time.Duration(s) * time.Second }
