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
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kindInfo is what the API server knows about an installed kind.
type kindInfo struct {
	namespaced bool
	// status: the kind has a status subresource, so writes to the main
	// resource ignore status and status writes ignore everything else.
	status bool
}

// change is one committed write, as a watch would deliver it.
type change struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
	// nodeName of a storage.k8s.io VolumeAttachment, for the controller's
	// watch mapping.
	nodeName string
}

type objKey struct{ namespace, name string }

// kindStore holds the objects of one installed kind.
type kindStore struct {
	gvk      schema.GroupVersionKind
	resource schema.GroupResource
	info     kindInfo
	objs     map[objKey]client.Object
	// sorted caches the objects by namespace and name; nil when stale.
	sorted []client.Object
}

// store is the API server's storage: the objects every component and the
// controller see. Components of the model mutate stored objects in place
// and call touch; the controller goes through apiClient, which copies.
type store struct {
	scheme *runtime.Scheme
	kinds  map[schema.GroupVersionKind]*kindStore
	// byType finds the kind of a typed object or list without hashing its GVK.
	byType map[reflect.Type]*kindStore
	rv     int64
	// reactive counts writes other components may react to (all but
	// Lease renewals, which only the node monitor reads, on its period,
	// and InstanceManagers, which only the operator reads).
	reactive int
	uids     int
	now      func() time.Time
	// suffix draws generateName suffixes.
	suffix  func() string
	changes []change
	// onChange sees every committed write (the trace); watch feeds the
	// manager's informer cache, when it lags.
	onChange func(verb string, obj client.Object)
	watch    func(now time.Time, c change, obj client.Object, deleted bool)
	// k resolves the kinds the components read all the time.
	k hotKinds
}

type hotKinds struct {
	nodes, pods, leases, replicaSets, kubeAttachments                 *kindStore
	longhornNodes, longhornVolumes, longhornReplicas, longhornEngines *kindStore
	longhornAttachments, longhornInstanceManagers, remediations       *kindStore
}

func newStore(scheme *runtime.Scheme, now func() time.Time, suffix func() string) *store {
	return &store{scheme: scheme, kinds: map[schema.GroupVersionKind]*kindStore{},
		byType: map[reflect.Type]*kindStore{}, now: now, suffix: suffix}
}

func (s *store) install(gvk schema.GroupVersionKind, info kindInfo) {
	k := &kindStore{gvk: gvk, resource: resourceName(gvk), info: info, objs: map[objKey]client.Object{}}
	s.kinds[gvk] = k
	for _, kind := range []string{gvk.Kind, gvk.Kind + "List"} {
		if obj, err := s.scheme.New(gvk.GroupVersion().WithKind(kind)); err == nil {
			s.byType[reflect.TypeOf(obj)] = k
		}
	}
}

// kindOf finds the installed kind of a typed or unstructured object or
// list; nil and its GVK when the kind is not served.
func (s *store) kindOf(obj runtime.Object) (*kindStore, schema.GroupVersionKind) {
	if k, ok := s.byType[reflect.TypeOf(obj)]; ok {
		return k, k.gvk
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		kinds, _, err := s.scheme.ObjectKinds(obj)
		if err != nil || len(kinds) == 0 {
			panic(fmt.Sprintf("worldmodel: no kind for %T: %v", obj, err))
		}
		gvk = kinds[0]
	}
	if list, ok := strings.CutSuffix(gvk.Kind, "List"); ok && meta.IsListType(obj) {
		gvk.Kind = list
	}
	return s.kinds[gvk], gvk
}

// gvkOf is the kind of a typed or unstructured object.
func (s *store) gvkOf(obj runtime.Object) schema.GroupVersionKind {
	_, gvk := s.kindOf(obj)
	return gvk
}

// get returns the stored object itself (no copy), or nil.
func (s *store) get(gvk schema.GroupVersionKind, namespace, name string) client.Object {
	k := s.kinds[gvk]
	if k == nil {
		return nil
	}
	return k.objs[objKey{namespace, name}]
}

// list returns the stored objects of a kind sorted by namespace and name,
// so the model never depends on map order. Callers must not modify it.
func (s *store) list(gvk schema.GroupVersionKind) []client.Object {
	k := s.kinds[gvk]
	if k == nil {
		return nil
	}
	return k.list()
}

func (k *kindStore) list() []client.Object {
	if k.sorted == nil {
		k.sorted = make([]client.Object, 0, len(k.objs))
		for _, o := range k.objs {
			k.sorted = append(k.sorted, o)
		}
		slices.SortFunc(k.sorted, func(a, b client.Object) int {
			return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
		})
	}
	return k.sorted
}

func (k *kindStore) put(obj client.Object) {
	k.objs[objKey{obj.GetNamespace(), obj.GetName()}] = obj
	k.sorted = nil
}

func (s *store) nextRV() string {
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

// create stores obj as a new object; the caller checked it does not exist.
func (s *store) create(obj client.Object) {
	k, gvk := s.kindOf(obj)
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(obj.GetGenerateName() + s.suffix())
	}
	s.uids++
	obj.SetUID(fmtUID(s.uids))
	obj.SetCreationTimestamp(apiTime(s.now()))
	obj.SetDeletionTimestamp(nil)
	obj.SetResourceVersion(s.nextRV())
	k.put(obj)
	s.record("create", gvk, obj)
}

// touch commits an in-place change to a stored object. An object being
// deleted goes once its last finalizer is gone.
func (s *store) touch(obj client.Object) {
	if gone(obj) {
		s.remove(obj)
		return
	}
	obj.SetResourceVersion(s.nextRV())
	s.record("update", s.gvkOf(obj), obj)
}

// stampWrite records the write of a field-changing update (or a create) by
// manager, as kube-apiserver does: the manager's Update entry in
// managedFields takes the API server's now, on the control plane's clock,
// never the writer's (k8s.io/apimachinery, pkg/util/managedfields/internal,
// managedFieldsUpdater.Update), to the whole second, rounded down, as
// metav1.Time keeps it. Only Leases are stamped: the gate reads no other
// object's.
func (s *store) stampWrite(obj client.Object, manager string) {
	at := apiTime(s.now())
	entries := obj.GetManagedFields()
	for i := range entries {
		if entries[i].Manager == manager && entries[i].Operation == metav1.ManagedFieldsOperationUpdate {
			entries[i].Time = &at
			return
		}
	}
	obj.SetManagedFields(append(entries, metav1.ManagedFieldsEntry{Manager: manager,
		Operation: metav1.ManagedFieldsOperationUpdate, Time: &at}))
}

// replace commits a new version of a stored object.
func (s *store) replace(old, next client.Object) {
	if gone(next) {
		s.remove(old)
		return
	}
	k, gvk := s.kindOf(old)
	next.SetResourceVersion(s.nextRV())
	k.put(next)
	s.record("update", gvk, next)
}

// markDeleted starts the deletion of a stored object: it goes at once
// without finalizers, else it stays with a deletionTimestamp.
func (s *store) markDeleted(obj client.Object) {
	if len(obj.GetFinalizers()) == 0 {
		s.remove(obj)
		return
	}
	if obj.GetDeletionTimestamp() == nil {
		now := apiTime(s.now())
		obj.SetDeletionTimestamp(&now)
		s.touch(obj)
	}
}

// gone: a deleted object without finalizers, except a pod still in its
// grace period, which waits for its kubelet.
func gone(obj client.Object) bool {
	if obj.GetDeletionTimestamp() == nil || len(obj.GetFinalizers()) > 0 {
		return false
	}
	pod, ok := obj.(*corev1.Pod)
	return !ok || pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds == 0
}

func (s *store) remove(obj client.Object) {
	k, gvk := s.kindOf(obj)
	delete(k.objs, objKey{obj.GetNamespace(), obj.GetName()})
	k.sorted = nil
	s.rv++
	s.record("delete", gvk, obj)
}

func (s *store) record(verb string, gvk schema.GroupVersionKind, obj client.Object) {
	c := change{gvk: gvk, namespace: obj.GetNamespace(), name: obj.GetName()}
	if va, ok := obj.(*storagev1.VolumeAttachment); ok {
		c.nodeName = va.Spec.NodeName
	}
	s.changes = append(s.changes, c)
	if gvk != gvkLease && gvk != gvkLonghornInstanceManager {
		s.reactive++
	}
	if s.watch != nil {
		s.watch(s.now(), c, obj, verb == "delete")
	}
	if s.onChange != nil {
		s.onChange(verb, obj)
	}
}

// drain returns the writes committed since the last drain.
func (s *store) drain() []change {
	out := s.changes
	s.changes = nil
	return out
}

func fmtUID(n int) types.UID {
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", n))
}

// resourceName is the plural resource of a kind, for error messages.
func resourceName(gvk schema.GroupVersionKind) schema.GroupResource {
	plural := strings.ToLower(gvk.Kind)
	if strings.HasSuffix(plural, "s") {
		plural += "es"
	} else {
		plural += "s"
	}
	return schema.GroupResource{Group: gvk.Group, Resource: plural}
}
