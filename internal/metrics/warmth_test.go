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

package metrics

import (
	"testing"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

func TestSetWarmthReplacesATemplatesSeries(t *testing.T) {
	g := gomega.NewWithT(t)
	reg := prometheus.NewRegistry()
	r := New(reg)
	tmpl := types.NamespacedName{Namespace: "ops", Name: "s3gw"}

	r.SetWarmth(tmpl, []PodWarmth{
		{Namespace: "s3gw", Pod: "gw-1", Node: "a", Reason: "AllCandidatesWarm", Candidates: 3, Warm: 3},
		{Namespace: "s3gw", Pod: "gw-2", Node: "b", Reason: "ImagePullFailing", Candidates: 2},
	})
	g.Expect(series(g, reg, "s3gw_remediation_pod_warm_candidate_nodes")).To(gomega.Equal([]string{
		"namespace=s3gw,node=a,pod=gw-1,reason=AllCandidatesWarm,template=s3gw,template_namespace=ops 3",
		"namespace=s3gw,node=b,pod=gw-2,reason=ImagePullFailing,template=s3gw,template_namespace=ops 0",
	}))
	g.Expect(series(g, reg, "s3gw_remediation_pod_candidate_nodes")).To(gomega.Equal([]string{
		"namespace=s3gw,node=a,pod=gw-1,reason=AllCandidatesWarm,template=s3gw,template_namespace=ops 3",
		"namespace=s3gw,node=b,pod=gw-2,reason=ImagePullFailing,template=s3gw,template_namespace=ops 2",
	}))

	// gw-2 moved and its images came; pre-pull turned off for the template.
	r.SetWarmth(tmpl, []PodWarmth{{Namespace: "s3gw", Pod: "gw-2", Node: "c", Reason: "AllCandidatesWarm", Candidates: 2, Warm: 2}})
	g.Expect(series(g, reg, "s3gw_remediation_pod_warm_candidate_nodes")).To(gomega.Equal([]string{
		"namespace=s3gw,node=c,pod=gw-2,reason=AllCandidatesWarm,template=s3gw,template_namespace=ops 2",
	}))
	r.ForgetWarmth(tmpl)
	g.Expect(series(g, reg, "s3gw_remediation_pod_warm_candidate_nodes")).To(gomega.BeEmpty())
	g.Expect(series(g, reg, "s3gw_remediation_pod_candidate_nodes")).To(gomega.BeEmpty())
}
