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
	"strings"

	corev1 "k8s.io/api/core/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// pullFailures are the kubelet's waiting reasons of a container whose image
// it cannot pull (pkg/kubelet/images/types.go): it retries with a back-off
// of up to five minutes, and no container runs meanwhile.
var pullFailures = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"ErrImageNeverPull": true, "ImageInspectError": true,
}

// maxColdNodes is how many cold candidates the report names.
const maxColdNodes = 10

// maxMessage bounds a kubelet message quoted in the report.
const maxMessage = 200

// coldNode is a candidate without the images, and why.
type coldNode struct {
	name, why string
	// pullError is the kubelet's reason when it cannot pull an image.
	pullError string
}

// Assess says how warm the candidate nodes of a gateway are, from its
// pre-pull pods (those labelled with its DaemonSet's name): a candidate is
// warm when the pre-pull pod there was made for the gateway's current
// images (ImagesAnnotation) and shows them pulled.
func Assess(pod *corev1.Pod, candidates []string, prepullPods []corev1.Pod) s3gwv1alpha1.ImageWarmth {
	images := strings.Join(Images(pod), ",")
	out := s3gwv1alpha1.ImageWarmth{CandidateNodes: int32(len(candidates))}
	if len(candidates) == 0 {
		out.Reason = s3gwv1alpha1.ReasonNoCandidateNode
		out.Message = "No node other than " + pod.Spec.NodeName + " is Ready, matches the gateway's node selector and required " +
			"node affinity and tolerates its taints: a replacement would find no node to run on"
		return out
	}
	onNode := map[string]*corev1.Pod{}
	for i := range prepullPods {
		p := &prepullPods[i]
		if cur, ok := onNode[p.Spec.NodeName]; !ok || (cur.DeletionTimestamp != nil && p.DeletionTimestamp == nil) {
			onNode[p.Spec.NodeName] = p
		}
	}
	var cold []coldNode
	for _, node := range candidates {
		if c, isCold := coldness(onNode[node], images); isCold {
			c.name = node
			cold = append(cold, c)
		}
	}
	out.WarmNodes = out.CandidateNodes - int32(len(cold))
	for i, c := range cold {
		if i == maxColdNodes {
			break
		}
		out.ColdNodes = append(out.ColdNodes, c.name)
	}
	out.Reason, out.Message = summary(out, cold, images)
	return out
}

// coldness says why a candidate is cold, from its pre-pull pod (nil: none).
func coldness(p *corev1.Pod, images string) (coldNode, bool) {
	switch {
	case p == nil:
		return coldNode{why: "no pre-pull pod"}, true
	case p.Annotations[ImagesAnnotation] != images:
		return coldNode{why: "its pre-pull pod is for other images (an update rolls out)"}, true
	case pulled(p):
		return coldNode{}, false
	case p.DeletionTimestamp != nil:
		return coldNode{why: "its pre-pull pod is being deleted"}, true
	}
	for _, s := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		w := s.State.Waiting
		if w == nil {
			continue
		}
		if pullFailures[w.Reason] {
			return coldNode{why: "cannot pull: " + w.Reason + quoted(w.Message), pullError: w.Reason}, true
		}
		if w.Reason != "" && w.Reason != "PodInitializing" && w.Reason != "ContainerCreating" {
			return coldNode{why: "its pre-pull pod fails: " + w.Reason + quoted(w.Message)}, true
		}
	}
	if p.Status.Phase == corev1.PodFailed {
		return coldNode{why: "its pre-pull pod failed: " + p.Status.Reason}, true
	}
	return coldNode{why: "pulling"}, true
}

// pulled reports whether a pre-pull pod holds its images: it is Ready, its
// idle container runs (it starts only once every init container finished
// and every image volume is mounted), or every pull init container exited
// 0 (the idle container alone failing does not make the node cold).
func pulled(p *corev1.Pod) bool {
	if p.DeletionTimestamp == nil && podReady(p) {
		return true
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == IdleContainer && s.State.Running != nil {
			return true
		}
	}
	pulls, done := 0, 0
	for _, s := range p.Status.InitContainerStatuses {
		if !strings.HasPrefix(s.Name, pullPrefix) {
			continue
		}
		pulls++
		if t := s.State.Terminated; t != nil && t.ExitCode == 0 {
			done++
		}
	}
	return pulls > 0 && done == pulls
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func quoted(message string) string {
	if message == "" {
		return ""
	}
	if len(message) > maxMessage {
		message = message[:maxMessage] + "…"
	}
	return " (" + message + ")"
}

// summary is the warmth's reason and message: a pull failure first (it
// will not heal by itself), then how many candidates are cold.
func summary(w s3gwv1alpha1.ImageWarmth, cold []coldNode, images string) (string, string) {
	counts := fmt.Sprintf("%d of %d candidate nodes hold the images (%s)", w.WarmNodes, w.CandidateNodes, images)
	var failing []string
	for _, c := range cold {
		if c.pullError != "" && len(failing) < 3 {
			failing = append(failing, c.name+" "+c.why)
		}
	}
	switch {
	case len(failing) > 0:
		return s3gwv1alpha1.ReasonImagePullFailing, counts + "; the kubelet cannot pull them on " + strings.Join(failing, "; ") +
			". Fix the image name or the gateway's imagePullSecrets, or the node's access to the registry"
	case len(cold) == 0:
		return s3gwv1alpha1.ReasonAllCandidatesWarm, counts
	}
	var why []string
	for i, c := range cold {
		if i == 3 {
			why = append(why, fmt.Sprintf("and %d more", len(cold)-i))
			break
		}
		why = append(why, c.name+": "+c.why)
	}
	reason := s3gwv1alpha1.ReasonSomeCandidatesCold
	if w.WarmNodes == 0 {
		reason = s3gwv1alpha1.ReasonAllCandidatesCold
	}
	return reason, counts + "; a replacement there pulls them first. Cold: " + strings.Join(why, "; ")
}
