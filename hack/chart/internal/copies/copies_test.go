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

package copies

import (
	"strings"
	"testing"

	"github.com/onsi/gomega"
)

var source = Source{Path: "config/x/x.yaml", Text: []byte("# Comment\n# more\n\napiVersion: v1\nkind: ConfigMap\n")}

func TestBodyLeavesTheCommentOut(t *testing.T) {
	gomega.NewWithT(t).Expect(string(source.Body())).To(gomega.Equal("apiVersion: v1\nkind: ConfigMap\n"))
}

func TestSpliceReplacesEveryCopy(t *testing.T) {
	g := gomega.NewWithT(t)
	d := source
	markdownBegin, markdownEnd := d.MarkdownMarkers()
	doc := "# Title\n" + markdownBegin + "\nstale\n" + markdownEnd + "\ntext\n" + markdownBegin + "\n" + markdownEnd + "\nend\n"
	out, err := d.SpliceMarkdown("doc.md", []byte(doc))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(string(out)).NotTo(gomega.ContainSubstring("stale"))
	g.Expect(strings.Count(string(out), string(d.Body()))).To(gomega.Equal(2))
	g.Expect(string(out)).To(gomega.HavePrefix("# Title\n" + markdownBegin + "\n```yaml\n# " + d.Path + "\n"))
	g.Expect(string(out)).To(gomega.HaveSuffix("```\n" + markdownEnd + "\nend\n"))

	again, err := d.SpliceMarkdown("doc.md", out)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(again).To(gomega.Equal(out), "splicing is idempotent")
}

func TestSpliceRefusesBrokenMarkers(t *testing.T) {
	d := source
	markdownBegin, markdownEnd := d.MarkdownMarkers()
	for name, doc := range map[string]string{
		"no markers":   "text\n",
		"no end":       markdownBegin + "\ntext\n",
		"nested begin": markdownBegin + "\n" + markdownBegin + "\n" + markdownEnd + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := d.SpliceMarkdown("doc.md", []byte(doc))
			gomega.NewWithT(t).Expect(err).To(gomega.MatchError(gomega.ContainSubstring("doc.md")))
		})
	}
}
