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
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The taint handover (issue #16 item 3, the taint owner record): FAR and
// SNR remove the out-of-service taint by key, whoever added it
// (fence-agents-remediation controllers/fenceagentsremediation_controller.go
// and self-node-remediation controllers/selfnoderemediation_controller.go,
// removeOutOfServiceTaint; both call utils.DeleteTaint, which matches key
// and effect), so the operator's taint can go while the operator's owner
// annotation stays. An admin who then finds the node still powered off and
// no taint on it puts one back, as Kubernetes' non-graceful node shutdown
// guide says to (concepts/cluster-administration/node-shutdown), and takes
// it off only some time after the node is Ready again. That taint is the
// admin's: the operator's cleanup must leave it.

// RetaintSpec is that admin.
type RetaintSpec struct {
	// After is how long after the taint went the admin looks.
	After time.Duration
	// TimeAdded: the admin's taint carries timeAdded (kubectl taint sets
	// none; a patch or a tool may).
	TimeAdded bool
	// Lingers is how long the node is Ready before the admin removes it.
	Lingers time.Duration
}

// generateRetaint draws the admin in half the episodes.
func generateRetaint(r *rand.Rand) *RetaintSpec {
	spec := &RetaintSpec{After: between(r, 0, time.Minute), TimeAdded: chance(r, 0.5),
		Lingers: between(r, time.Minute, 10*time.Minute)}
	if !chance(r, 0.5) {
		return nil
	}
	return spec
}

// retaintState is the admin's memory: the nodes they tainted and since when
// each has been Ready again.
type retaintState struct {
	tainted    map[string]bool
	readySince map[string]time.Time
}

// operatorTaintRemoved is told that someone other than the operator removed
// an out-of-service taint the operator added; the admin looks After later.
func (w *World) operatorTaintRemoved(name string) {
	spec := w.sc.Retaint
	if spec == nil {
		return
	}
	w.schedule(spec.After, "an admin looks at "+name, func() {
		node, n := w.api.node(name), w.nodeByName(name)
		if node == nil || n == nil || n.Powered || nodeReady(node) || outOfService(node) {
			return
		}
		taint := outOfServiceTaint()
		if spec.TimeAdded {
			taint = withTimeAdded(taint, apiTime(w.adminClock()))
		}
		w.addTaint(node, taint, "an admin")
		w.retaint.tainted[name] = true
		w.tracef("admin", "found %s powered off with no out-of-service taint: added one", name)
	})
}

// adminRemovesRetaint takes the admin's taint off a node Ready for Lingers.
func (w *World) adminRemovesRetaint() {
	for name := range w.retaint.tainted {
		node := w.api.node(name)
		since, seen := w.retaint.readySince[name]
		switch {
		case node == nil || !nodeReady(node):
			delete(w.retaint.readySince, name)
		case !seen:
			w.retaint.readySince[name] = w.now
			w.wakeAt(w.now.Add(w.sc.Retaint.Lingers))
		case !w.now.Before(since.Add(w.sc.Retaint.Lingers)):
			w.removeTaint(node, corev1.TaintNodeOutOfService)
			delete(w.retaint.tainted, name)
			delete(w.retaint.readySince, name)
			w.tracef("admin", "removed the out-of-service taint from %s, Ready again", name)
		}
	}
}
