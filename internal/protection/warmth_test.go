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

package protection

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// withImages is a protected pod whose candidates are warm on warm of
// candidates nodes, for reason.
func withImages(name, reason string, warm, candidates int32) Pod {
	p := s3gwPod(name, "node-"+name, "node-c")
	p.Images = &s3gwv1alpha1.ImageWarmth{Reason: reason, WarmNodes: warm, CandidateNodes: candidates}
	return p
}

func TestReportWarmth(t *testing.T) {
	// Grace 50 s, NodeHealthCheck 1 min, ControllerDetach's 5.3 s.
	const warmRTO = 115300 * time.Millisecond
	tests := []struct {
		name     string
		pod      Pod
		estimate time.Duration
		rto      time.Duration
	}{
		{"all candidates warm: no pull", withImages("a", s3gwv1alpha1.ReasonAllCandidatesWarm, 3, 3), 0, warmRTO},
		{"one candidate cold: the default estimate", withImages("a", s3gwv1alpha1.ReasonSomeCandidatesCold, 2, 3), 0, warmRTO + DefaultImagePullEstimate},
		{"all cold, a slow uplink configured", withImages("a", s3gwv1alpha1.ReasonAllCandidatesCold, 0, 3), 90 * time.Second, warmRTO + 90*time.Second},
		{"no candidate: nowhere to pull", withImages("a", s3gwv1alpha1.ReasonNoCandidateNode, 0, 0), 0, warmRTO},
		{"pre-pull off: the images are not known", s3gwPod("a", "node-a", "node-c"), 0, warmRTO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := inputs(watchingPool("nhc", time.Minute))
			in.PrePull, in.ImagePullEstimate = tt.pod.Images != nil, tt.estimate
			status := Report(in, []Pod{tt.pod})
			p := status.Pods[0]
			g.Expect(p.Protected).To(BeTrue(), "a cold node is a warning, not a reason to be unprotected")
			g.Expect(p.Reason).To(Equal(s3gwv1alpha1.ReasonPodProtected))
			g.Expect(p.Images).To(Equal(tt.pod.Images))
			g.Expect(p.ExpectedRTO).To(Equal(&metav1.Duration{Duration: tt.rto}))
			g.Expect(p.Message).To(ContainSubstring("within " + tt.rto.String()))
			g.Expect(status.ExpectedRTO.Duration).To(Equal(tt.rto))
			g.Expect(status.Conditions[0].Reason).To(Equal(s3gwv1alpha1.ReasonAllPodsProtected))
			if tt.pod.Images == nil {
				g.Expect(status.Conditions).To(HaveLen(1), "no ImagesWarm condition without spec.prePull")
			}
		})
	}
}

func TestImagesCondition(t *testing.T) {
	g := NewWithT(t)
	in := inputs(watchingPool("nhc", time.Minute))
	in.PrePull = true
	images := func(pods ...Pod) metav1.Condition {
		status := Report(in, pods)
		g.Expect(status.Conditions).To(HaveLen(2))
		g.Expect(status.Conditions[1].Type).To(Equal(s3gwv1alpha1.ConditionImagesWarm))
		return status.Conditions[1]
	}

	c := images(withImages("a", s3gwv1alpha1.ReasonAllCandidatesWarm, 3, 3), withImages("b", s3gwv1alpha1.ReasonAllCandidatesWarm, 1, 1))
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonAllCandidatesWarm))
	g.Expect(c.Message).To(ContainSubstring("all 2 s3gw pods"))

	c = images(withImages("a", s3gwv1alpha1.ReasonSomeCandidatesCold, 2, 3), withImages("b", s3gwv1alpha1.ReasonImagePullFailing, 0, 1),
		withImages("c", s3gwv1alpha1.ReasonAllCandidatesWarm, 1, 1))
	g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonImagePullFailing), "the worst reason")
	g.Expect(c.Message).To(ContainSubstring("2 of 3 s3gw pods"))
	g.Expect(c.Message).To(ContainSubstring("s3gw/a (SomeCandidatesCold, 2/3 warm)"))
	g.Expect(c.Message).To(ContainSubstring("s3gw/b (ImagePullFailing, 0/1 warm)"))

	c = images(withImages("a", s3gwv1alpha1.ReasonNoCandidateNode, 0, 0))
	g.Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonNoCandidateNode))

	c = images()
	g.Expect(c.Status).To(Equal(metav1.ConditionUnknown))
	g.Expect(c.Reason).To(Equal(s3gwv1alpha1.ReasonNoPodsSelected))
}
