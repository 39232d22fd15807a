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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestKubeletReReadiesPodsOnItsReturn: a pod the node lifecycle controller
// marked not Ready while its node was unreachable stays so while the
// kubelet is cut, and is Ready again within the status manager's sync
// period once it reaches the API server.
func TestKubeletReReadiesPodsOnItsReturn(t *testing.T) {
	w := replicaWorld(t, nil)
	n := w.nodes[0]
	if len(n.containers) == 0 {
		t.Fatal("no gateway runs on n1")
	}
	p := w.api.podByUID(n.containers[0].PodUID)
	ready := func() corev1.ConditionStatus {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status
			}
		}
		return ""
	}
	n.CP = false
	w.markPodsNotReady(n.Name)
	runKubelets(w, time.Minute)
	if got := ready(); got != corev1.ConditionFalse {
		t.Fatalf("pod Ready=%s while its kubelet is cut; want False", got)
	}
	n.CP = true
	runKubelets(w, podStatusSyncPeriod*time.Second)
	if got := ready(); got != corev1.ConditionTrue {
		t.Errorf("pod Ready=%s %s after its kubelet's return; want True", got, time.Duration(podStatusSyncPeriod)*time.Second)
	}
}

// runKubelets runs the kubelets for d, at every wake they ask for.
func runKubelets(w *World, d time.Duration) {
	for until := w.now.Add(d); !w.now.After(until); w.now = w.nextWake() {
		w.kubelets()
	}
}
