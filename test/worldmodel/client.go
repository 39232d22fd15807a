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
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// errCrashed is what every call of a dead manager process returns; nothing
// it does after the crash reaches the API.
var errCrashed = errors.New("worldmodel: the manager process crashed")

// apiClient is the controller's client: API server semantics over the
// store (copies in and out, resourceVersion locking, preconditions,
// NotFound/Conflict/AlreadyExists, NoMatch for uninstalled kinds, label and
// field selectors, status subresources, finalizers, pod graceful deletion).
type apiClient struct {
	s *store
	// cache, when set, is where Get and List read: the manager's informer
	// cache, behind s. Writes always go to s.
	cache  *store
	mapper meta.RESTMapper
	// before runs ahead of every call: other components may act between
	// two calls of one reconcile, as in a real cluster.
	before func()
	// afterWrite sees every committed write (old is nil on create, obj nil
	// on delete); it may crash the process.
	afterWrite func(verb string, old, obj client.Object)
	dead       bool
	// read are the kinds the process has read, whose dynamic watches it
	// has therefore started.
	read map[schema.GroupVersionKind]bool
}

var _ client.Client = &apiClient{}

func newAPIClient(s *store) *apiClient {
	mapper := meta.NewDefaultRESTMapper(nil)
	for gvk, k := range s.kinds {
		scope := meta.RESTScopeRoot
		if k.info.namespaced {
			scope = meta.RESTScopeNamespace
		}
		mapper.Add(gvk, scope)
	}
	return &apiClient{s: s, mapper: mapper, read: map[schema.GroupVersionKind]bool{}}
}

func (c *apiClient) enter() error {
	if c.dead {
		return errCrashed
	}
	if c.before != nil {
		c.before()
	}
	return nil
}

func (c *apiClient) committed(verb string, old, obj client.Object) {
	if c.afterWrite != nil {
		c.afterWrite(verb, old, obj)
	}
}

// kind resolves an object's kind and checks it is served.
func (c *apiClient) kind(obj runtime.Object) (*kindStore, schema.GroupVersionKind, error) {
	k, gvk := c.s.kindOf(obj)
	if k == nil {
		return nil, gvk, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return k, gvk, nil
}

// lookup enters a call on an existing object: its kind and stored version.
func (c *apiClient) lookup(obj runtime.Object, key client.ObjectKey) (*kindStore, client.Object, error) {
	if err := c.enter(); err != nil {
		return nil, nil, err
	}
	k, _, err := c.kind(obj)
	if err != nil {
		return nil, nil, err
	}
	stored := k.objs[objKey{key.Namespace, key.Name}]
	if stored == nil {
		return nil, nil, apierrors.NewNotFound(k.resource, key.Name)
	}
	return k, stored, nil
}

// Get implements client.Reader: from the cache when there is one.
func (c *apiClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return c.get(c.reads(), key, obj)
}

// List implements client.Reader: from the cache when there is one.
func (c *apiClient) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.list(c.reads(), list, opts...)
}

func (c *apiClient) reads() *store {
	if c.cache != nil {
		return c.cache
	}
	return c.s
}

func (c *apiClient) get(from *store, key client.ObjectKey, obj client.Object) error {
	if err := c.enter(); err != nil {
		return err
	}
	k, gvk, err := c.kind(obj)
	if err != nil {
		return err
	}
	c.read[gvk] = true
	stored := from.kinds[gvk].objs[objKey{key.Namespace, key.Name}]
	if stored == nil {
		return apierrors.NewNotFound(k.resource, key.Name)
	}
	return copyInto(gvk, stored, obj)
}

func (c *apiClient) list(from *store, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.enter(); err != nil {
		return err
	}
	_, gvk, err := c.kind(list)
	if err != nil {
		return err
	}
	c.read[gvk] = true
	k := from.kinds[gvk]
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	_, wantUnstructured := list.(*unstructured.UnstructuredList)
	var items []runtime.Object
	for _, obj := range k.list() {
		ok, err := matches(gvk, obj, lo)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		item, err := copyOut(gvk, obj, wantUnstructured)
		if err != nil {
			return err
		}
		items = append(items, item)
		if lo.Limit > 0 && int64(len(items)) == lo.Limit {
			break
		}
	}
	if err := meta.SetList(list, items); err != nil {
		return err
	}
	list.SetResourceVersion(fmt.Sprint(c.s.rv))
	return nil
}

// uncached is the manager's APIReader: it reads the API server itself.
type uncached struct{ c *apiClient }

// Get implements client.Reader.
func (u uncached) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return u.c.get(u.c.s, key, obj)
}

// List implements client.Reader.
func (u uncached) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return u.c.list(u.c.s, list, opts...)
}

// matches applies a list's namespace, label and field selectors.
func matches(gvk schema.GroupVersionKind, obj client.Object, lo *client.ListOptions) (bool, error) {
	if lo.Namespace != "" && obj.GetNamespace() != lo.Namespace {
		return false, nil
	}
	if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
		return false, nil
	}
	if lo.FieldSelector == nil {
		return true, nil
	}
	for _, req := range lo.FieldSelector.Requirements() {
		value, err := fieldValue(gvk, obj, req.Field)
		if err != nil {
			return false, err
		}
		if (value == req.Value) != (req.Operator != "!=") {
			return false, nil
		}
	}
	return true, nil
}

// fieldValue serves the field selectors the API server supports for the
// modelled kinds; others are a bad request, as on a real server.
func fieldValue(gvk schema.GroupVersionKind, obj client.Object, field string) (string, error) {
	switch {
	case field == "metadata.name":
		return obj.GetName(), nil
	case field == "metadata.namespace":
		return obj.GetNamespace(), nil
	case field == "spec.nodeName" && gvk == gvkPod:
		return obj.(*corev1.Pod).Spec.NodeName, nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", field))
}

// Create implements client.Writer.
func (c *apiClient) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	if err := c.enter(); err != nil {
		return err
	}
	k, gvk, err := c.kind(obj)
	if err != nil {
		return err
	}
	if k.info.namespaced != (obj.GetNamespace() != "") {
		return apierrors.NewBadRequest(fmt.Sprintf("%s %q: namespace %q does not match the kind's scope", gvk.Kind, obj.GetName(), obj.GetNamespace()))
	}
	if obj.GetName() == "" && obj.GetGenerateName() == "" {
		return apierrors.NewInvalid(gvk.GroupKind(), "", nil)
	}
	if obj.GetName() != "" && k.objs[objKey{obj.GetNamespace(), obj.GetName()}] != nil {
		return apierrors.NewAlreadyExists(resourceName(gvk), obj.GetName())
	}
	stored, err := admit(gvk, obj)
	if err != nil {
		return err
	}
	c.s.create(stored)
	c.committed("create", nil, stored)
	return copyInto(gvk, stored, obj)
}

// Delete implements client.Writer.
func (c *apiClient) Delete(_ context.Context, obj client.Object, opts ...client.DeleteOption) error {
	k, stored, err := c.lookup(obj, client.ObjectKeyFromObject(obj))
	if err != nil {
		return err
	}
	do := (&client.DeleteOptions{}).ApplyOptions(opts)
	if err := checkPreconditions(k.gvk, stored, do.Preconditions); err != nil {
		return err
	}
	if pod, ok := stored.(*corev1.Pod); ok {
		deletePod(c.s, pod, do.GracePeriodSeconds)
	} else {
		c.s.markDeleted(stored)
	}
	c.committed("delete", stored, nil)
	return nil
}

func checkPreconditions(gvk schema.GroupVersionKind, stored client.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != stored.GetUID() {
		return apierrors.NewConflict(resourceName(gvk), stored.GetName(),
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, stored.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != stored.GetResourceVersion() {
		return apierrors.NewConflict(resourceName(gvk), stored.GetName(),
			fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
				*p.ResourceVersion, stored.GetResourceVersion()))
	}
	return nil
}

// deletePod is the pod registry's graceful deletion: a bound pod gets a
// deletionTimestamp grace seconds ahead and waits for its kubelet; grace 0
// (a force delete) or an unbound pod goes at once, unless finalizers hold it.
func deletePod(s *store, pod *corev1.Pod, grace *int64) {
	g := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	if grace != nil {
		g = *grace
	}
	if pod.Spec.NodeName == "" {
		g = 0
	}
	if cur := pod.DeletionGracePeriodSeconds; cur != nil && *cur <= g {
		return // already terminating at least as fast
	}
	if g == 0 && len(pod.Finalizers) == 0 {
		s.remove(pod)
		return
	}
	ts := apiTime(s.now().Add(secondsDuration(g)))
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &ts, &g
	s.touch(pod)
}

// Update implements client.Writer.
func (c *apiClient) Update(_ context.Context, obj client.Object, _ ...client.UpdateOption) error {
	return c.update(obj, "")
}

// Patch implements client.Writer; merge patches only (what MergeFrom sends).
func (c *apiClient) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
	return c.patch(obj, patch, "")
}

func (c *apiClient) update(obj client.Object, subresource string) error {
	k, stored, err := c.lookup(obj, client.ObjectKeyFromObject(obj))
	if err != nil {
		return err
	}
	if rv := obj.GetResourceVersion(); rv != "" && rv != stored.GetResourceVersion() {
		return conflict(k.resource, stored)
	}
	desired, err := toMap(obj)
	if err != nil {
		return err
	}
	return c.commit(k, stored, desired, subresource, obj)
}

func (c *apiClient) patch(obj client.Object, patch client.Patch, subresource string) error {
	if patch.Type() != types.MergePatchType {
		return apierrors.NewBadRequest(fmt.Sprintf("worldmodel serves merge patches only, not %s", patch.Type()))
	}
	k, stored, err := c.lookup(obj, client.ObjectKeyFromObject(obj))
	if err != nil {
		return err
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	desired, err := applyMergePatch(stored, data)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if rv, _, _ := unstructured.NestedString(desired, "metadata", "resourceVersion"); rv != stored.GetResourceVersion() {
		return conflict(k.resource, stored)
	}
	return c.commit(k, stored, desired, subresource, obj)
}

func conflict(resource schema.GroupResource, stored client.Object) error {
	return apierrors.NewConflict(resource, stored.GetName(),
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

// commit replaces a stored object with desired, keeping what the request
// may not change: identity, and status or everything but status depending
// on the subresource. A write that changes nothing commits nothing.
func (c *apiClient) commit(k *kindStore, stored client.Object, desired map[string]any, subresource string, out client.Object) error {
	gvk := k.gvk
	current, err := toMap(stored)
	if err != nil {
		return err
	}
	next := restrict(current, desired, k.info, subresource)
	if err := checkFinalizers(gvk, stored, next); err != nil {
		return err
	}
	if equalIgnoringVersion(current, next) {
		return copyInto(gvk, stored, out)
	}
	replacement, err := fromMap(gvk, next)
	if err != nil {
		return err
	}
	c.s.replace(stored, replacement)
	c.committed("update", stored, replacement)
	return copyInto(gvk, replacement, out)
}

// Status implements client.StatusClient.
func (c *apiClient) Status() client.SubResourceWriter {
	return subResourceClient{c: c, name: fieldStatus}
}

// SubResource implements client.SubResourceClientConstructor.
func (c *apiClient) SubResource(name string) client.SubResourceClient {
	return subResourceClient{c: c, name: name}
}

// Apply implements client.Writer; server-side apply is not modelled.
func (c *apiClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return errors.New("worldmodel: server-side apply is not modelled")
}

// DeleteAllOf implements client.Writer; not modelled.
func (c *apiClient) DeleteAllOf(context.Context, client.Object, ...client.DeleteAllOfOption) error {
	return errors.New("worldmodel: deletecollection is not modelled")
}

// Scheme implements client.Client.
func (c *apiClient) Scheme() *runtime.Scheme { return scheme }

// RESTMapper implements client.Client.
func (c *apiClient) RESTMapper() meta.RESTMapper { return c.mapper }

// GroupVersionKindFor implements client.Client.
func (c *apiClient) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(obj, scheme)
}

// IsObjectNamespaced implements client.Client.
func (c *apiClient) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	k, _, err := c.kind(obj)
	if err != nil {
		return false, err
	}
	return k.info.namespaced, nil
}

type subResourceClient struct {
	c    *apiClient
	name string
}

func (s subResourceClient) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return fmt.Errorf("worldmodel: subresource %s get is not modelled", s.name)
}

func (s subResourceClient) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return fmt.Errorf("worldmodel: subresource %s create is not modelled", s.name)
}

func (s subResourceClient) Update(_ context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
	if s.name != fieldStatus {
		return fmt.Errorf("worldmodel: subresource %s is not modelled", s.name)
	}
	return s.c.update(obj, s.name)
}

func (s subResourceClient) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.SubResourcePatchOption) error {
	if s.name != fieldStatus {
		return fmt.Errorf("worldmodel: subresource %s is not modelled", s.name)
	}
	return s.c.patch(obj, patch, s.name)
}

func (s subResourceClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return errors.New("worldmodel: server-side apply is not modelled")
}
