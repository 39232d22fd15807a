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

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Candidates are the nodes, sorted by name, that the pod's replacement may
// be scheduled to if the pod's node failed now: Ready, other than the
// pod's node, matching its node selector and required node affinity (as
// the scheduler matches them), and tolerating every NoSchedule and
// NoExecute taint (a cordoned node carries node.kubernetes.io/unschedulable).
// Pod affinity, topology spread and free capacity are left out: they
// change with every pod, and the DaemonSet cannot follow them.
func Candidates(pod *corev1.Pod, nodes []corev1.Node) []string {
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	var out []string
	for i := range nodes {
		node := &nodes[i]
		if node.Name == pod.Spec.NodeName || !ready(node) {
			continue
		}
		if ok, err := required.Match(node); err != nil || !ok {
			continue
		}
		if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations,
			schedulingTaint, false); untolerated {
			continue
		}
		out = append(out, node.Name)
	}
	slices.Sort(out)
	return out
}

// schedulingTaint keeps the taints that keep a new pod off a node.
func schedulingTaint(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
