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
	"maps"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An admin replaces a NotReady Node object (issue #16): deletes it and
// re-creates it from a saved manifest, labels and spec kept, no status,
// while the machine, cut off from the control plane, may still run s3gw.
// The new object has a new UID and nothing of the kubelet's yet; what
// follows is upstream's: the garbage collector deletes the old Lease
// (gc.go), Pod GC deletes the pods of a name with no Node (podgc.go), NHC
// deletes its CRs of a deleted node (nhc.go), the node lifecycle controller
// keeps its memory by name (nodelifecycle.go), and a running kubelet, once
// it reaches the API, patches its status onto the new object and re-creates
// its Lease (kubelet.go).

// RecreateSpec is the admin's replacement of one Node object.
type RecreateSpec struct {
	Node int
	// After is how long the Node has been NotReady when the admin deletes it.
	After time.Duration
	// Gap is how long until the admin re-creates it.
	Gap time.Duration
}

// generateRecreate draws the admin in half the episodes, usually for the
// failed s3gw node.
func generateRecreate(r *rand.Rand, sc *Scenario) *RecreateSpec {
	if !chance(r, 0.5) {
		return nil
	}
	node := sc.Instances[0].Node
	if chance(r, 0.2) {
		node = r.IntN(sc.Nodes)
	}
	return &RecreateSpec{Node: node, After: between(r, 30*time.Second, 8*time.Minute), Gap: between(r, 0, time.Minute)}
}

// recreateState is the admin's progress: when they saw the Node NotReady,
// and whether they replaced it already (once per episode).
type recreateState struct {
	notReadySince time.Time
	done          bool
}

// adminReplacesNode deletes the Node once it has been NotReady for After,
// then re-creates it Gap later unless its kubelet registered it first
// (the admin's create then fails: AlreadyExists).
func (w *World) adminReplacesNode() {
	spec := w.sc.Recreate
	if spec == nil || w.recreate.done {
		return
	}
	name := w.nodes[spec.Node].Name
	node := w.api.node(name)
	switch {
	case node == nil || nodeReady(node):
		w.recreate.notReadySince = time.Time{}
		return
	case w.recreate.notReadySince.IsZero():
		w.recreate.notReadySince = w.now
		w.wakeAt(w.now.Add(spec.After))
		return
	case w.now.Before(w.recreate.notReadySince.Add(spec.After)):
		return
	}
	saved := savedManifest(node)
	w.recreate.done = true
	w.api.markDeleted(node)
	w.tracef("admin", "deleted NotReady node %s; re-creates it in %s", name, spec.Gap)
	w.schedule(spec.Gap, "admin re-creates node "+name, func() {
		if w.api.node(name) != nil {
			w.tracef("admin", "re-creating node %s: AlreadyExists", name)
			return
		}
		w.api.create(saved)
		w.tracef("admin", "re-created node %s (uid %s) from its saved manifest", name, saved.UID)
	})
}

// savedManifest is what `kubectl get node -o yaml` kept, stripped for
// create: name, labels and spec; no status, UID or resourceVersion.
func savedManifest(node *corev1.Node) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: maps.Clone(node.Labels)},
		Spec: *node.Spec.DeepCopy()}
}
