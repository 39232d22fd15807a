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
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Label marks the pre-pull DaemonSets and their pods; its value is the
// DaemonSet's name. The operator caches only objects that carry it.
const Label = "s3gw-remediation.medik8s.io/prepull"

// DaemonSetIndex is the cache index of the pre-pull pods by their
// DaemonSet's name (the Label's value): the protection report reads one
// gateway's pods without scanning its namespace's.
const DaemonSetIndex = "prepull.daemonset"

// Kinds of a gateway's workload.
const (
	kindDeployment = "Deployment"
	kindReplicaSet = "ReplicaSet"
)

// Gateway is one s3gw workload: the pods one controller replaces.
type Gateway struct {
	Namespace string
	// Kind and Name of the workload: a Deployment (named from its
	// ReplicaSet and the pod-template-hash label, without an API read), a
	// StatefulSet, or whatever else controls the pod.
	Kind, Name string
	// Owner is the pod's controller (a ReplicaSet, a StatefulSet). It owns
	// the DaemonSet, so that the garbage collector deletes the DaemonSet
	// with the gateway even when the operator is not running.
	Owner metav1.OwnerReference
}

// GatewayOf returns the gateway a pod belongs to; false for a pod that
// nothing would replace (no controller), a DaemonSet's pod or a static
// pod's mirror.
func GatewayOf(pod *corev1.Pod) (Gateway, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind == "DaemonSet" || ref.Kind == "Node" {
		return Gateway{}, false
	}
	g := Gateway{Namespace: pod.Namespace, Kind: ref.Kind, Name: ref.Name,
		Owner: metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}}
	if ref.Kind == kindReplicaSet {
		if hash := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; hash != "" && strings.HasSuffix(ref.Name, "-"+hash) {
			g.Kind, g.Name = kindDeployment, strings.TrimSuffix(ref.Name, "-"+hash)
		}
	}
	return g, true
}

// maxName is the longest DaemonSet name: it is also the value of Label.
const maxName = 63

// DaemonSetName is the name of the gateway's pre-pull DaemonSet, in the
// gateway's namespace: "<deployment>-prepull", or
// "<name>-<kind>-prepull" for other kinds, shortened with a hash of the
// kind and name to fit a label value.
func (g Gateway) DaemonSetName() string {
	suffix := "-prepull"
	if g.Kind != kindDeployment {
		suffix = "-" + strings.ToLower(g.Kind) + suffix
	}
	if name := g.Name + suffix; len(name) <= maxName {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(g.Kind + "/" + g.Name))
	tag := fmt.Sprintf("-%08x", h.Sum32())
	keep := max(0, maxName-len(suffix)-len(tag))
	prefix := strings.TrimRight(g.Name[:min(keep, len(g.Name))], "-.")
	return prefix + tag + suffix
}

// String names the gateway as people do: kind namespace/name.
func (g Gateway) String() string { return g.Kind + " " + g.Namespace + "/" + g.Name }

// Home is the gateway's pod the DaemonSet copies: the newest one bound to
// a node and not being deleted. Nil while none is (a failover's old pod
// gone, its replacement not scheduled yet): the DaemonSet then stays as it
// is until the gateway lands.
func Home(pods []*corev1.Pod) *corev1.Pod {
	var home *corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if home == nil || home.CreationTimestamp.Before(&p.CreationTimestamp) ||
			(home.CreationTimestamp.Equal(&p.CreationTimestamp) && p.Name > home.Name) {
			home = p
		}
	}
	return home
}

// Images are the images of the pod's init containers and containers, each
// once, in that order: what its replacement pulls before it starts.
func Images(pod *corev1.Pod) []string {
	var out []string
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.Image != "" && !slices.Contains(out, c.Image) {
				out = append(out, c.Image)
			}
		}
	}
	return out
}
