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

package longhornsim

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

// ignoreKubeletNotReadyTime is how long Longhorn ignores a Kubernetes Ready=False
// (not Unknown) before calling the node down (longhorn/longhorn#7302).
const ignoreKubeletNotReadyTime = 15 * time.Second

// readiness is what Longhorn's node controller concludes about a node.
type readiness struct {
	ready   bool
	reason  string
	message string
	// recheckAfter is set when the conclusion will change by itself.
	recheckAfter time.Duration
}

// longhornNodeReadiness derives the Longhorn Node Ready condition from the
// Kubernetes Node (nil when it is gone), as longhorn-manager's node
// controller does. A lost heartbeat (Unknown) counts at once; a kubelet
// reporting False counts after 15 s.
func longhornNodeReadiness(node *corev1.Node, now time.Time) readiness {
	if node == nil {
		return readiness{reason: longhorn.NodeReasonKubernetesNodeGone, message: "Kubernetes node missing"}
	}
	var ready *corev1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &node.Status.Conditions[i]
		}
	}
	switch {
	case ready != nil && ready.Status == corev1.ConditionTrue:
		return readiness{ready: true}
	case ready != nil && ready.Status == corev1.ConditionFalse:
		if age := now.Sub(ready.LastTransitionTime.Time); age < ignoreKubeletNotReadyTime {
			return readiness{ready: true, recheckAfter: ignoreKubeletNotReadyTime - age}
		}
	}
	return readiness{
		reason:  longhorn.NodeReasonKubernetesNodeNotReady,
		message: "Kubernetes node " + node.Name + " not ready",
	}
}

// nodeDown is Longhorn's IsNodeDownOrDeleted: the node's Longhorn Node is
// missing or Ready=False because Kubernetes lost or deleted the node. Only
// then does Longhorn record engines there as stopped without asking them.
func nodeDown(n *longhorn.Node) bool {
	if n == nil {
		return true
	}
	c := condition(n.Status.Conditions, longhorn.NodeConditionReady)
	return c != nil && c.Status == string(corev1.ConditionFalse) &&
		(c.Reason == longhorn.NodeReasonKubernetesNodeNotReady || c.Reason == longhorn.NodeReasonKubernetesNodeGone)
}

// kubeletRunning reports whether the node's simulated kubelet, and so its
// Longhorn instance manager, is alive and reachable.
func kubeletRunning(n *corev1.Node) bool {
	return n != nil && n.Labels[cluster.ManagedNodeLabel] == "true"
}

func condition(conds []longhorn.Condition, t string) *longhorn.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
