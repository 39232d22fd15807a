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

package monitoring

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// targetLabels are what a ServiceMonitor adds to every scraped series; the
// manager's own labels win where they collide (honorLabels).
var targetLabels = map[string]bool{
	"job": true, "instance": true, "service": true, "endpoint": true, "container": true, "pod": true, "namespace": true,
}

// prometheusSeries are series Prometheus writes itself, not the manager.
var prometheusSeries = map[string]bool{"up": true}

// metricName matches the names of the series the shipped rules and
// dashboard read: ours, controller-runtime's and client-go's.
var metricName = regexp.MustCompile(`\b(s3gw_remediation_[a-z_]+|controller_runtime_[a-z_]+|leader_election_[a-z_]+)\b`)

// TestInputSeriesAreExported: every input series of the promtool tests has
// a name the manager exports and exactly its labels (plus target labels),
// so the tests exercise the rules on series that really exist.
func TestInputSeriesAreExported(t *testing.T) {
	g := gomega.NewWithT(t)
	exported := exportedSeries(t)
	count := 0
	for file, tests := range readTests(g) {
		for _, tc := range tests.Tests {
			for _, in := range tc.InputSeries {
				count++
				name, labels, err := parseSeries(in.Series)
				g.Expect(err).NotTo(gomega.HaveOccurred(), "%s: %q", file, in.Series)
				if prometheusSeries[name] {
					continue
				}
				want, ok := exported[name]
				g.Expect(ok).To(gomega.BeTrue(), "%s, test %q: the manager exports no %s", file, tc.Name, name)
				for l := range want {
					g.Expect(labels).To(gomega.HaveKey(l), "%s, test %q: %s lacks label %s", file, tc.Name, name, l)
				}
				for l := range labels {
					g.Expect(want[l] || targetLabels[l]).To(gomega.BeTrue(),
						"%s, test %q: %s has label %s, which neither the manager nor the scrape adds", file, tc.Name, name, l)
				}
				if phase, ok := labels["phase"]; ok {
					g.Expect(phases()).To(gomega.ContainElement(phase), "%s, test %q: no phase %s", file, tc.Name, phase)
				}
			}
		}
	}
	g.Expect(count).To(gomega.BeNumerically(">", 0))
}

// TestRulesAndDashboardReadExportedMetrics: every metric name in an alert
// expression and a dashboard query is exported, and every phase a rule
// matches exists.
func TestRulesAndDashboardReadExportedMetrics(t *testing.T) {
	g := gomega.NewWithT(t)
	exported := exportedSeries(t)
	exprs := map[string][]string{}
	for _, group := range readRule(g).Spec.Groups {
		for _, r := range group.Rules {
			exprs["alert "+r.Alert] = []string{r.Expr}
		}
	}
	for _, panel := range readDashboard(g).Panels {
		exprs["dashboard panel "+panel.Title] = panel.exprs()
	}
	for where, list := range exprs {
		g.Expect(list).NotTo(gomega.BeEmpty(), "%s has no query", where)
		for _, expr := range list {
			names := metricName.FindAllString(expr, -1)
			g.Expect(names).NotTo(gomega.BeEmpty(), "%s reads none of the manager's metrics: %s", where, expr)
			for _, name := range names {
				g.Expect(exported).To(gomega.HaveKey(name), "%s reads %s, which the manager does not export", where, name)
			}
			for _, m := range regexp.MustCompile(`phase(?:=|=~)"([^"]*)"`).FindAllStringSubmatch(expr, -1) {
				for _, phase := range strings.Split(m[1], "|") {
					g.Expect(phases()).To(gomega.ContainElement(phase), "%s matches phase %s, which does not exist", where, phase)
				}
			}
		}
	}
}

// TestMetricsDocListsExactlyTheExportedMetrics keeps docs/metrics.md's table
// and internal/metrics in step.
func TestMetricsDocListsExactlyTheExportedMetrics(t *testing.T) {
	g := gomega.NewWithT(t)
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "metrics.md"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(s3gw_remediation_[a-z_]+)` \\|").FindAllStringSubmatch(string(data), -1) {
		documented[m[1]] = true
	}
	ours := map[string]bool{}
	for name := range exportedSeries(t) {
		if strings.HasPrefix(name, "s3gw_remediation_") {
			ours[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")] = true
		}
	}
	g.Expect(sortedKeys(documented)).To(gomega.Equal(sortedKeys(ours)))
}

// TestRunbookLinksResolve: every runbook_url points at a heading of a doc.
func TestRunbookLinksResolve(t *testing.T) {
	g := gomega.NewWithT(t)
	const prefix = "https://github.com/s3gw-tech/s3gw-remediation/blob/main/"
	for _, group := range readRule(g).Spec.Groups {
		for _, r := range group.Rules {
			url, ok := r.Annotations["runbook_url"]
			g.Expect(ok).To(gomega.BeTrue(), "%s has no runbook_url", r.Alert)
			g.Expect(url).To(gomega.HavePrefix(prefix))
			path, anchor, _ := strings.Cut(strings.TrimPrefix(url, prefix), "#")
			data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), path))
			g.Expect(err).NotTo(gomega.HaveOccurred(), "%s: runbook %s", r.Alert, url)
			if anchor != "" {
				g.Expect(headingAnchors(string(data))).To(gomega.ContainElement(anchor), "%s: runbook %s", r.Alert, url)
			}
		}
	}
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings.
func headingAnchors(markdown string) []string {
	var out []string
	for _, line := range strings.Split(markdown, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		title = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(title, "")
		out = append(out, strings.ReplaceAll(title, " ", "-"))
	}
	return out
}

// parseSeries splits promtool's series notation, name{label="value",...}.
func parseSeries(s string) (string, map[string]string, error) {
	name, rest, ok := strings.Cut(s, "{")
	if !ok {
		return s, map[string]string{}, nil
	}
	rest, ok = strings.CutSuffix(rest, "}")
	if !ok {
		return "", nil, fmt.Errorf("no closing brace")
	}
	labels := map[string]string{}
	for rest != "" {
		key, after, ok := strings.Cut(rest, `="`)
		if !ok {
			return "", nil, fmt.Errorf("label without a quoted value at %q", rest)
		}
		value, after, ok := strings.Cut(after, `"`)
		if !ok {
			return "", nil, fmt.Errorf("unterminated value of %s", key)
		}
		labels[strings.TrimSpace(key)] = value
		rest = strings.TrimPrefix(strings.TrimSpace(after), ",")
	}
	return name, labels, nil
}

// phases are the values of status.phase, from the generated CRD's enum.
func phases() []string {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases",
		"s3gw-remediation.medik8s.io_s3gwremediations.yaml"))
	if err != nil {
		panic(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		panic(err)
	}
	enum := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["phase"].Enum
	out := make([]string, 0, len(enum))
	for _, v := range enum {
		out = append(out, strings.Trim(string(v.Raw), `"`))
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
