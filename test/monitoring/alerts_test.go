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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// promtoolEnv names the promtool binary; the Makefile sets it to bin/promtool.
const promtoolEnv = "PROMTOOL"

var (
	ruleFile  = filepath.Join("config", "prometheus", "prometheus_rule.yaml")
	testsDir  = filepath.Join("config", "prometheus", "tests")
	rulesName = "rules.yaml" // what the tests' rule_files name
)

// prometheusRule is the part of the PrometheusRule the tests read.
type prometheusRule struct {
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// promtoolTests is the part of a promtool test file the checks read.
type promtoolTests struct {
	Tests []struct {
		Name        string `json:"name"`
		InputSeries []struct {
			Series string `json:"series"`
		} `json:"input_series"`
		AlertRuleTests []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestAlertRulesWithPromtool runs promtool's rule check and unit tests on
// the PrometheusRule's groups, written out as the rule file the tests load.
func TestAlertRulesWithPromtool(t *testing.T) {
	g := gomega.NewWithT(t)
	root := testenv.RepoRoot()
	promtool := os.Getenv(promtoolEnv)
	if promtool == "" {
		promtool = filepath.Join(root, "bin", "promtool")
	}
	_, err := os.Stat(promtool)
	g.Expect(err).NotTo(gomega.HaveOccurred(), "promtool not found: run 'make test-alerts' (or 'make test'), which builds bin/promtool")

	dir := t.TempDir()
	g.Expect(writeRuleFile(root, filepath.Join(dir, rulesName))).To(gomega.Succeed())
	tests, err := filepath.Glob(filepath.Join(root, testsDir, "*.yaml"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(tests).NotTo(gomega.BeEmpty())
	args := make([]string, 0, 2+len(tests))
	args = append(args, "test", "rules")
	for _, src := range tests {
		data, err := os.ReadFile(src)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		dst := filepath.Join(dir, filepath.Base(src))
		g.Expect(os.WriteFile(dst, data, 0o600)).To(gomega.Succeed())
		args = append(args, dst)
	}

	for _, cmd := range [][]string{{"check", "rules", filepath.Join(dir, rulesName)}, args} {
		out, err := exec.Command(promtool, cmd...).CombinedOutput()
		t.Logf("promtool %s:\n%s", strings.Join(cmd[:2], " "), out)
		g.Expect(err).NotTo(gomega.HaveOccurred(), "promtool %s failed:\n%s", strings.Join(cmd[:2], " "), out)
	}
}

// writeRuleFile writes the PrometheusRule's spec (its groups) as a
// Prometheus rule file.
func writeRuleFile(root, path string) error {
	data, err := os.ReadFile(filepath.Join(root, ruleFile))
	if err != nil {
		return err
	}
	var rule struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &rule); err != nil {
		return err
	}
	out, err := yaml.Marshal(rule.Spec)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

func readRule(g *gomega.WithT) prometheusRule {
	var rule prometheusRule
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), ruleFile))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(yaml.Unmarshal(data, &rule)).To(gomega.Succeed())
	return rule
}

func readTests(g *gomega.WithT) map[string]promtoolTests {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), testsDir, "*.yaml"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	out := map[string]promtoolTests{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		var tests promtoolTests
		g.Expect(yaml.Unmarshal(data, &tests)).To(gomega.Succeed(), f)
		out[filepath.Base(f)] = tests
	}
	return out
}

// TestEveryAlertHasAFiringTest: an alert whose expression names a series
// that does not exist never fires, so a test that expects it to fire is
// what catches a renamed metric.
func TestEveryAlertHasAFiringTest(t *testing.T) {
	g := gomega.NewWithT(t)
	firing := map[string]bool{}
	for _, file := range readTests(g) {
		for _, tc := range file.Tests {
			for _, at := range tc.AlertRuleTests {
				if len(at.ExpAlerts) > 0 {
					firing[at.Alertname] = true
				}
			}
		}
	}
	var alerts []string
	for _, group := range readRule(g).Spec.Groups {
		for _, r := range group.Rules {
			if r.Alert != "" {
				alerts = append(alerts, r.Alert)
				g.Expect(firing).To(gomega.HaveKey(r.Alert), "no promtool test expects %s to fire", r.Alert)
			}
		}
	}
	g.Expect(alerts).NotTo(gomega.BeEmpty())
}
