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
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Desired is a gateway's DaemonSet as a pass plans it: where it goes, the
// hash of what the operator writes of it (SpecHashAnnotation) and the
// input it is built from. Plans compare hashes and build only the
// DaemonSets they write.
type Desired struct {
	types.NamespacedName
	Hash  string
	Input Input
	// built is the DaemonSet the hash was computed from, when this pass
	// built it.
	built *appsv1.DaemonSet
}

// Build returns the DaemonSet, the caller's own to write.
func (d Desired) Build() *appsv1.DaemonSet {
	if d.built != nil {
		return d.built
	}
	return DaemonSet(d.Input)
}

// SpecHashes remembers, for each gateway's DaemonSet, its spec hash and
// what it was computed from, so that a pass whose gateway did not change
// neither builds nor hashes its DaemonSet: passes run on every gateway
// pod's change, for all gateways at once. It holds one hash per gateway
// that Retain keeps, and is safe for concurrent use; the zero value is
// ready, and a nil one remembers nothing.
type SpecHashes struct {
	mu    sync.Mutex
	byKey map[types.NamespacedName]specHashOf
}

// specHashOf is a remembered hash and its inputs. The Home pod stands for
// itself by UID and resourceVersion: any change to a pod changes the one,
// a new pod the other.
type specHashOf struct {
	gateway      Gateway
	pod          types.UID
	podVersion   string
	spec         s3gwv1alpha1.PrePullSpec
	programImage string
	templates    []string
	hash         string
}

// matches reports whether the hash was computed from in.
func (h *specHashOf) matches(in Input) bool {
	return h.pod == in.Pod.UID && h.podVersion == in.Pod.ResourceVersion && h.gateway == in.Gateway && h.spec == in.Spec &&
		h.programImage == in.ProgramImage && slices.Equal(h.templates, in.Templates)
}

// Desired returns the gateway's desired DaemonSet: with the remembered
// hash when in is what it was computed from, else with the hash of the
// DaemonSet built now, which is remembered. A pod without a UID or
// resourceVersion (not read from the API) is never remembered.
func (s *SpecHashes) Desired(in Input) Desired {
	key := types.NamespacedName{Namespace: in.Gateway.Namespace, Name: in.Gateway.DaemonSetName()}
	remember := s != nil && in.Pod.UID != "" && in.Pod.ResourceVersion != ""
	if remember {
		s.mu.Lock()
		h, ok := s.byKey[key]
		s.mu.Unlock()
		if ok && h.matches(in) {
			return Desired{NamespacedName: key, Hash: h.hash, Input: in}
		}
	}
	ds := DaemonSet(in)
	d := Desired{NamespacedName: key, Hash: ds.Annotations[SpecHashAnnotation], Input: in, built: ds}
	if remember {
		s.mu.Lock()
		if s.byKey == nil {
			s.byKey = map[types.NamespacedName]specHashOf{}
		}
		s.byKey[key] = specHashOf{gateway: in.Gateway, pod: in.Pod.UID, podVersion: in.Pod.ResourceVersion, spec: in.Spec,
			programImage: in.ProgramImage, templates: slices.Clone(in.Templates), hash: d.Hash}
		s.mu.Unlock()
	}
	return d
}

// Retain forgets the hashes of the DaemonSets keep does not name: those of
// gateways gone, or between pods.
func (s *SpecHashes) Retain(keep func(types.NamespacedName) bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.byKey {
		if !keep(key) {
			delete(s.byKey, key)
		}
	}
}
