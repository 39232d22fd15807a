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
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// series lists a gathered metric's samples as "label=value,... value".
func series(g *gomega.WithT, reg *prometheus.Registry, name string) []string {
	families, err := reg.Gather()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var out []string
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out = append(out, strings.Join(labels, ",")+" "+strconv.FormatFloat(m.GetGauge().GetValue(), 'g', -1, 64))
		}
	}
	sort.Strings(out)
	return out
}

func TestSetProtectionReplacesATemplatesSeries(t *testing.T) {
	g := gomega.NewWithT(t)
	reg := prometheus.NewRegistry()
	r := New(reg)
	tmpl := types.NamespacedName{Namespace: "ops", Name: "s3gw"}
	other := types.NamespacedName{Namespace: "ops", Name: "other"}

	r.SetProtection(tmpl, []PodProtection{
		{Namespace: "s3gw", Pod: "gw-1", Node: "a", Reason: "Protected", Protected: true, ExpectedRTO: 355 * time.Second},
		{Namespace: "s3gw", Pod: "gw-2", Node: "b", Reason: "NoFencingEvidence"},
	})
	r.SetProtection(other, []PodProtection{{Namespace: "x", Pod: "gw", Node: "c", Reason: "Protected", Protected: true, ExpectedRTO: time.Minute}})
	g.Expect(series(g, reg, "s3gw_remediation_pod_protected")).To(gomega.Equal([]string{
		"namespace=s3gw,node=a,pod=gw-1,reason=Protected,template=s3gw,template_namespace=ops 1",
		"namespace=s3gw,node=b,pod=gw-2,reason=NoFencingEvidence,template=s3gw,template_namespace=ops 0",
		"namespace=x,node=c,pod=gw,reason=Protected,template=other,template_namespace=ops 1",
	}))
	g.Expect(series(g, reg, "s3gw_remediation_pod_expected_rto_seconds")).To(gomega.Equal([]string{
		"namespace=s3gw,node=a,pod=gw-1,reason=Protected,template=s3gw,template_namespace=ops 355",
		"namespace=x,node=c,pod=gw,reason=Protected,template=other,template_namespace=ops 60",
	}))

	// gw-1 lost its protection, gw-2 is gone, the other template deleted.
	r.SetProtection(tmpl, []PodProtection{{Namespace: "s3gw", Pod: "gw-1", Node: "a", Reason: "NoHealthyReplica"}})
	r.ForgetProtection(other)
	g.Expect(series(g, reg, "s3gw_remediation_pod_protected")).To(gomega.Equal([]string{
		"namespace=s3gw,node=a,pod=gw-1,reason=NoHealthyReplica,template=s3gw,template_namespace=ops 0",
	}))
	g.Expect(series(g, reg, "s3gw_remediation_pod_expected_rto_seconds")).To(gomega.BeEmpty(), "no RTO for an unprotected pod")
	g.Expect(series(g, reg, "s3gw_remediation_template_selected_pods")).To(gomega.Equal([]string{
		"template=s3gw,template_namespace=ops 1",
	}), "the deleted template's count goes too")
}

// A template whose selector matches no pod has no per-pod series; its
// count says so.
func TestSetProtectionCountsATemplateWithoutPods(t *testing.T) {
	g := gomega.NewWithT(t)
	reg := prometheus.NewRegistry()
	r := New(reg)
	tmpl := types.NamespacedName{Namespace: "ops", Name: "s3gw"}
	r.SetProtection(tmpl, []PodProtection{{Namespace: "s3gw", Pod: "gw", Node: "a", Reason: "Protected", Protected: true, ExpectedRTO: time.Minute}})
	r.SetProtection(tmpl, nil)
	g.Expect(series(g, reg, "s3gw_remediation_pod_protected")).To(gomega.BeEmpty())
	g.Expect(series(g, reg, "s3gw_remediation_template_selected_pods")).To(gomega.Equal([]string{
		"template=s3gw,template_namespace=ops 0",
	}))
}
