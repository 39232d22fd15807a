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
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// DefaultImagePullEstimate is how long a replacement on a cold node is
// expected to pull the gateway's images before it starts: s3gw's image
// (a few hundred MB) from a registry on the LAN takes about 5–20 s; the
// manager's --image-pull-estimate sets another figure (a slow uplink: a
// minute or more).
const DefaultImagePullEstimate = 20 * time.Second

// pullDelay is what a pod's expected RTO adds for its images: the pull
// estimate when a candidate node is cold (the scheduler may pick it),
// nothing when all are warm, when the report knows nothing of the images
// (spec.prePull off) or when no node is left to pull on.
func pullDelay(in Inputs, images *s3gwv1alpha1.ImageWarmth) time.Duration {
	if images == nil || images.CandidateNodes == 0 || images.WarmNodes == images.CandidateNodes {
		return 0
	}
	if in.ImagePullEstimate > 0 {
		return in.ImagePullEstimate
	}
	return DefaultImagePullEstimate
}

// warmthOrder ranks the warmth reasons, the worst first: what the
// ImagesWarm condition reports when gateways differ.
var warmthOrder = []string{
	s3gwv1alpha1.ReasonNoCandidateNode, s3gwv1alpha1.ReasonImagePullFailing,
	s3gwv1alpha1.ReasonAllCandidatesCold, s3gwv1alpha1.ReasonSomeCandidatesCold,
}

// imagesCondition is the ImagesWarm condition of a template whose
// spec.prePull is enabled: True when every reported gateway's candidates
// all hold its images, else False with the worst reason and each cold
// gateway named. A cold candidate is a warning: the Protected condition
// does not change.
func imagesCondition(pods []s3gwv1alpha1.PodProtection) metav1.Condition {
	c := metav1.Condition{Type: s3gwv1alpha1.ConditionImagesWarm}
	worst, reported := len(warmthOrder), 0
	var cold []string
	for _, p := range pods {
		if p.Images == nil {
			continue
		}
		reported++
		for i, r := range warmthOrder {
			if p.Images.Reason == r {
				worst = min(worst, i)
				cold = append(cold, fmt.Sprintf("%s/%s (%s, %d/%d warm)", p.Namespace, p.Name, r, p.Images.WarmNodes, p.Images.CandidateNodes))
			}
		}
	}
	switch {
	case reported == 0:
		c.Status, c.Reason = metav1.ConditionUnknown, s3gwv1alpha1.ReasonNoPodsSelected
		c.Message = "No selected pod has a controller that would create a replacement"
	case len(cold) == 0:
		c.Status, c.Reason = metav1.ConditionTrue, s3gwv1alpha1.ReasonAllCandidatesWarm
		c.Message = fmt.Sprintf("The images of all %d s3gw pods are present on every node their replacement may be scheduled to", reported)
	default:
		c.Status, c.Reason = metav1.ConditionFalse, warmthOrder[worst]
		c.Message = fmt.Sprintf("%d of %d s3gw pods would pull their images on some candidate nodes before serving again: %s",
			len(cold), reported, strings.Join(cold, ", "))
	}
	return c
}
