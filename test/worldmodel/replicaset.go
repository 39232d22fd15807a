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
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// replicaSets keeps one active pod per s3gw ReplicaSet: a terminating pod
// is not active, so its replacement is created at once.
func (w *World) replicaSets() {
	pods := w.api.pods()
	for _, rs := range listAs[*appsv1.ReplicaSet](w.api.k.replicaSets) {
		active := 0
		for _, p := range pods {
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == rs.UID && !podTerminating(p) {
				active++
			}
		}
		if active == 0 {
			release := rs.Labels["app.kubernetes.io/instance"]
			pod := w.newGatewayPod(rs, release)
			w.api.create(pod)
			w.tracef("kcm", "ReplicaSet %s created pod %s", rs.Name, pod.Name)
		}
	}
}

// scheduler binds pending pods to a random Ready node without taints the
// pod does not tolerate; a baseline takes the node its operator run chose
// for the same ReplicaSet's pod of the same rank, where it fits
// (coupling).
func (w *World) scheduler() {
	for _, p := range w.api.pods() {
		if p.Spec.NodeName != "" || podTerminating(p) {
			continue
		}
		var fits []string
		for _, n := range w.nodes {
			if node := w.api.node(n.Name); nodeReady(node) && w.schedulable(p, node) {
				fits = append(fits, n.Name)
			}
		}
		if len(fits) == 0 {
			continue
		}
		p.Spec.NodeName = coupled(w.coupling, "schedule "+metav1.GetControllerOf(p).Name, fits[w.rnd.IntN(len(fits))],
			func(n string) bool { return slices.Contains(fits, n) })
		w.api.touch(p)
		w.tracef("kcm", "scheduled pod %s on %s", p.Name, p.Spec.NodeName)
	}
}

func (w *World) schedulable(p *corev1.Pod, node *corev1.Node) bool {
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if tolerationFor(p, t) == nil {
			return false
		}
	}
	return true
}

// foreignFinalizer is another controller's finalizer on gateway pods: a
// deleted pod stays in the API (terminating) until it lets go.
const foreignFinalizer = "example.com/pod-protection"

// releaseFinalizers is that controller: it removes its finalizer a while
// after the pod's deletion began.
func (w *World) releaseFinalizers() {
	if w.sc.PodFinalizer == 0 {
		return
	}
	for _, p := range w.api.pods() {
		if !podTerminating(p) || !slices.Contains(p.Finalizers, foreignFinalizer) {
			continue
		}
		since, ok := w.terminating[p.UID]
		if !ok {
			w.terminating[p.UID] = w.now
			since = w.now
		}
		if due := since.Add(w.sc.PodFinalizer); w.now.Before(due) {
			w.wakeAt(due)
			continue
		}
		p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == foreignFinalizer })
		w.api.touch(p)
		w.tracef("kcm", "foreign finalizer released pod %s", p.Name)
	}
}
