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

package helmchart_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
)

// question is one Rancher form field of questions.yaml, with every key
// Rancher reads, so that a misspelt key fails the strict decoding.
type question struct {
	Variable          string     `json:"variable"`
	Label             string     `json:"label"`
	Description       string     `json:"description"`
	Type              string     `json:"type"`
	Required          bool       `json:"required"`
	Default           any        `json:"default"`
	Group             string     `json:"group"`
	Min               *int       `json:"min"`
	Max               *int       `json:"max"`
	MinLength         *int       `json:"min_length"`
	MaxLength         *int       `json:"max_length"`
	Options           []string   `json:"options"`
	ValidChars        string     `json:"valid_chars"`
	InvalidChars      string     `json:"invalid_chars"`
	ShowIf            string     `json:"show_if"`
	ShowSubquestionIf any        `json:"show_subquestion_if"`
	Subquestions      []question `json:"subquestions"`
}

// templateSpecPrefix is where the form writes into the template's spec.
const templateSpecPrefix = "defaultTemplate.spec."

func readQuestions(t *testing.T) []question {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(helmchart.Dir(root(t)), "questions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var q struct {
		Questions []question `json:"questions"`
	}
	if err := yaml.UnmarshalStrict(data, &q); err != nil {
		t.Fatal(err)
	}
	var all []question
	for _, top := range q.Questions {
		all = append(all, top)
		all = append(all, top.Subquestions...)
	}
	return all
}

// formAnswers are the values Rancher's form sends when nothing is changed:
// every question's default.
func formAnswers(t *testing.T) map[string]any {
	out := map[string]any{}
	for _, q := range readQuestions(t) {
		m := out
		parts := strings.Split(q.Variable, ".")
		for _, p := range parts[:len(parts)-1] {
			if _, ok := m[p]; !ok {
				m[p] = map[string]any{}
			}
			m = m[p].(map[string]any)
		}
		m[parts[len(parts)-1]] = q.Default
	}
	return out
}

// TestQuestionsAreValues: every form field is a value of values.yaml with
// the same default, or a field of the template's spec (in the CRD's schema,
// with options the schema allows).
func TestQuestionsAreValues(t *testing.T) {
	g := gomega.NewWithT(t)
	data, err := os.ReadFile(filepath.Join(helmchart.Dir(root(t)), "values.yaml"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defaults := map[string]any{}
	g.Expect(yaml.Unmarshal(data, &defaults)).To(gomega.Succeed())
	spec := templateSpecSchema(t)

	for _, q := range readQuestions(t) {
		if path, ok := strings.CutPrefix(q.Variable, templateSpecPrefix); ok {
			field := schemaAt(spec, path)
			g.Expect(field).NotTo(gomega.BeNil(), "%s is not a field of the template's spec", q.Variable)
			if field == nil {
				continue
			}
			for _, o := range q.Options {
				g.Expect(enum(field)).To(gomega.ContainElement(o), "%s offers %s", q.Variable, o)
			}
			if field.Default != nil {
				g.Expect(strings.Trim(string(field.Default.Raw), `"`)).To(gomega.Equal(fmt.Sprint(q.Default)),
					"%s defaults to the API's default", q.Variable)
			}
			continue
		}
		value, ok := lookup(defaults, q.Variable)
		g.Expect(ok).To(gomega.BeTrue(), "%s is not in values.yaml", q.Variable)
		if !strings.HasPrefix(q.Variable, "monitoring.") { // the form suggests Rancher Monitoring's names
			g.Expect(fmt.Sprint(value)).To(gomega.Equal(fmt.Sprint(q.Default)), "%s's default", q.Variable)
		}
	}
}

// TestFormDefaultsRender: the values the untouched form sends pass the
// values schema and render.
func TestFormDefaultsRender(t *testing.T) {
	g := gomega.NewWithT(t)
	ch, err := helmchart.Load(root(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	_, _, err = helmchart.Render(ch, namespace, formAnswers(t))
	g.Expect(err).NotTo(gomega.HaveOccurred())
}

func lookup(m map[string]any, path string) (any, bool) {
	var v any = m
	for _, p := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

func templateSpecSchema(t *testing.T) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), "config", "crd", "bases",
		"s3gw-remediation.medik8s.io_s3gwremediationtemplates.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	return schemaAt(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, "spec.template.spec")
}

func schemaAt(s *apiextensionsv1.JSONSchemaProps, path string) *apiextensionsv1.JSONSchemaProps {
	for _, p := range strings.Split(path, ".") {
		child, ok := s.Properties[p]
		if !ok {
			return nil
		}
		s = &child
	}
	return s
}

func enum(s *apiextensionsv1.JSONSchemaProps) []string {
	out := make([]string, 0, len(s.Enum))
	for _, e := range s.Enum {
		out = append(out, strings.Trim(string(e.Raw), `"`))
	}
	return out
}
