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

package nodehealthcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func shipped(t *testing.T) *Definition {
	t.Helper()
	d, err := Load(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The chart's values block is the source's name and spec but the template
// reference, which the chart writes itself.
func TestValuesBlockIsTheSpec(t *testing.T) {
	g := gomega.NewWithT(t)
	d := shipped(t)
	var values struct {
		NodeHealthCheck map[string]any `json:"nodeHealthCheck"`
	}
	g.Expect(yaml.Unmarshal(append([]byte("nodeHealthCheck:\n"), d.ValuesBlock()...), &values)).To(gomega.Succeed())
	spec, _, _ := unstructured.NestedMap(d.Object.Object, "spec")
	delete(spec, "remediationTemplate")
	spec["name"] = d.Object.GetName()
	g.Expect(values.NodeHealthCheck).To(gomega.Equal(spec))
}

// A source the chart could not render as written is refused.
func TestLoadRefusesWhatTheChartCannotCopy(t *testing.T) {
	d := shipped(t)
	for name, edit := range map[string]func(string) string{
		"another spec key": func(s string) string {
			return strings.Replace(s, "spec:\n", "spec:\n  pauseRequests: [x]\n", 1)
		},
		"another template": func(s string) string {
			return strings.Replace(s, "name: "+TemplateName, "name: mine", 1)
		},
		"an empty selector": func(s string) string {
			return strings.Replace(s, "  selector:\n    matchLabels:\n      kubernetes.io/os: linux\n", "  selector: {}\n", 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, Source)
			g := gomega.NewWithT(t)
			g.Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(gomega.Succeed())
			g.Expect(os.WriteFile(path, []byte(edit(string(d.Text))), 0o644)).To(gomega.Succeed())
			_, err := Load(root)
			g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring(Source)))
		})
	}
}
