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

package v1alpha1_test

import (
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// rule is one admission rule of the spec, shown by a spec it accepts and
// one it refuses (each differing from the defaults in the field at hand),
// the field the refusal names, below spec, and what its message says.
type rule struct {
	accepted, rejected map[string]any
	field, message     string
}

// specHolders are the two places the spec lives: a remediation's spec, and
// the template's spec.template.spec that NodeHealthCheck copies into it.
var specHolders = []struct {
	kind, prefix string
	wrap         func(spec map[string]any) map[string]any
}{
	{"S3GWRemediation", "spec.", func(spec map[string]any) map[string]any { return spec }},
	{"S3GWRemediationTemplate", "spec.template.spec.", func(spec map[string]any) map[string]any {
		return map[string]any{"template": map[string]any{"spec": spec}}
	}},
}

func createSpec(kind string, spec map[string]any) error {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(s3gwv1alpha1.GroupVersion.String())
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetGenerateName("rule-")
	return k8sClient.Create(ctx, u)
}

// causes are the field errors of a refusal, without the note the API
// server adds when a schema error kept it from running the CEL rules.
func causes(err error) []metav1.StatusCause {
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Details == nil {
		return nil
	}
	var out []metav1.StatusCause
	for _, c := range status.ErrStatus.Details.Causes {
		if !strings.Contains(c.Message, "some validation rules were not checked") {
			out = append(out, c)
		}
	}
	return out
}

var _ = DescribeTable("Admission: each rule accepts a valid spec and refuses a typo, naming the field",
	func(r rule) {
		for _, holder := range specHolders {
			Expect(createSpec(holder.kind, holder.wrap(r.accepted))).To(Succeed(), "%s accepts %v", holder.kind, r.accepted)

			err := createSpec(holder.kind, holder.wrap(r.rejected))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s refuses %v: %v", holder.kind, r.rejected, err)
			field := holder.prefix + r.field
			Expect(causes(err)).To(ContainElement(And(HaveField("Field", field), HaveField("Message", ContainSubstring(r.message)))),
				"%s: %v", holder.kind, err)
			// The refusal is this rule's alone: no other field is blamed.
			Expect(causes(err)).To(HaveEach(HaveField("Field", field)), "%s: %v", holder.kind, err)
		}
	},

	// workloadSelector
	Entry("the selector is not empty", rule{
		accepted: selector(labels("app.kubernetes.io/name", "s3gw")),
		rejected: selector(map[string]any{"matchLabels": map[string]any{}, "matchExpressions": []any{}}),
		field:    "workloadSelector",
		message:  "workloadSelector must not be empty: an empty selector matches every pod on the node",
	}),
	Entry("the selector requires a label (In)", rule{
		accepted: selector(expressions(expr("app.kubernetes.io/name", "In", "s3gw"), expr("app.kubernetes.io/component", "NotIn", "ui"))),
		rejected: selector(expressions(expr("app.kubernetes.io/component", "NotIn", "ui", "cosi"), expr("canary", "DoesNotExist"))),
		field:    "workloadSelector",
		message:  "workloadSelector needs a label the pods must have (matchLabels, or an In or Exists expression): NotIn and DoesNotExist alone match every pod that lacks the label",
	}),
	Entry("the selector requires a label (Exists or matchLabels)", rule{
		accepted: selector(map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "s3gw"},
			"matchExpressions": []any{expr("canary", "DoesNotExist")}}),
		rejected: selector(expressions(expr("app.kubernetes.io/name", "DoesNotExist"))),
		field:    "workloadSelector",
		message:  "workloadSelector needs a label the pods must have",
	}),
	Entry("matchLabels keys are label keys", rule{
		accepted: selector(labels("example.com/app.name_2", "s3gw", "tier", "gateway")),
		rejected: selector(labels("app.kubernetes.io/name", "s3gw", "app.kubernetes.io/component:", "gateway")),
		field:    "workloadSelector.matchLabels",
		message:  "keys must be label keys: a name of at most 63 letters, digits, '-', '_' and '.' that begins and ends with a letter or digit, after an optional DNS subdomain and '/', e.g. app.kubernetes.io/name",
	}),
	Entry("a matchLabels key's name has at most 63 characters", rule{
		accepted: selector(labels("example.com/"+strings.Repeat("n", 63), "s3gw")),
		rejected: selector(labels("example.com/"+strings.Repeat("n", 64), "s3gw")),
		field:    "workloadSelector.matchLabels",
		message:  "keys must be label keys",
	}),
	Entry("a matchLabels key's prefix has at most 253 characters", rule{
		accepted: selector(labels(dnsName(253)+"/app", "s3gw")),
		rejected: selector(labels(dnsName(254)+"/app", "s3gw")),
		field:    "workloadSelector.matchLabels",
		message:  "keys must be label keys",
	}),
	Entry("matchLabels has at most 16 labels", rule{
		accepted: selector(manyLabels(16)),
		rejected: selector(manyLabels(17)),
		field:    "workloadSelector.matchLabels",
		message:  "must have at most 16 items",
	}),
	Entry("matchLabels values are label values", rule{
		accepted: selector(labels("app.kubernetes.io/name", "s3gw", "release", "", "version", "v0.24_1.x")),
		rejected: selector(labels("app.kubernetes.io/name", "s3gw gateway")),
		field:    "workloadSelector.matchLabels[app.kubernetes.io/name]",
		message:  "must be a label value: empty, or letters, digits, '-', '_' and '.' that begin and end with a letter or digit",
	}),
	Entry("a matchLabels value has at most 63 characters", rule{
		accepted: selector(labels("app.kubernetes.io/instance", strings.Repeat("v", 63))),
		rejected: selector(labels("app.kubernetes.io/instance", strings.Repeat("v", 64))),
		field:    "workloadSelector.matchLabels.app.kubernetes.io/instance",
		message:  "may not be more than 63 bytes",
	}),
	Entry("matchExpressions has at most 16 requirements", rule{
		accepted: selector(expressions(manyExpressions(16)...)),
		rejected: selector(expressions(manyExpressions(17)...)),
		field:    "workloadSelector.matchExpressions",
		message:  "must have at most 16 items",
	}),
	Entry("an expression's key is a label key", rule{
		accepted: selector(expressions(expr("app.kubernetes.io/name", "Exists"))),
		rejected: selector(expressions(expr("app.kubernetes.io/", "Exists"))),
		field:    "workloadSelector.matchExpressions[0].key",
		message:  "must be a label key: an optional DNS subdomain and / before a name of at most 63 letters, digits, '-', '_' and '.' that begins and ends with a letter or digit, e.g. app.kubernetes.io/name",
	}),
	Entry("an expression's key has a prefix of at most 253 characters", rule{
		accepted: selector(expressions(expr(dnsName(253)+"/"+strings.Repeat("n", 63), "Exists"))),
		rejected: selector(expressions(expr(dnsName(254)+"/n", "Exists"))),
		field:    "workloadSelector.matchExpressions[0].key",
		message:  "must be a label key",
	}),
	Entry("an expression's operator is known", rule{
		accepted: selector(expressions(expr("app.kubernetes.io/name", "In", "s3gw"), expr("canary", "DoesNotExist"))),
		rejected: selector(expressions(expr("app.kubernetes.io/name", "Equals", "s3gw"))),
		field:    "workloadSelector.matchExpressions[0].operator",
		message:  `Unsupported value: "Equals": supported values: "In", "NotIn", "Exists", "DoesNotExist"`,
	}),
	Entry("In and NotIn have values", rule{
		accepted: selector(expressions(expr("app.kubernetes.io/name", "In", "s3gw"), expr("tier", "NotIn", "ui"))),
		rejected: selector(expressions(expr("app.kubernetes.io/name", "In", "s3gw"), expr("tier", "NotIn"))),
		field:    "workloadSelector.matchExpressions[1]",
		message:  "operators In and NotIn need at least one value",
	}),
	Entry("Exists and DoesNotExist have none", rule{
		accepted: selector(expressions(expr("app.kubernetes.io/name", "Exists"))),
		rejected: selector(expressions(expr("app.kubernetes.io/name", "Exists", "s3gw"))),
		field:    "workloadSelector.matchExpressions[0]",
		message:  "operators Exists and DoesNotExist take no values",
	}),
	Entry("an expression's values are label values", rule{
		accepted: selector(expressions(expr("app.kubernetes.io/name", "In", "s3gw", "s3gw-ui", ""))),
		rejected: selector(expressions(expr("app.kubernetes.io/name", "In", "s3gw", "s3gw,s3gw-ui"))),
		field:    "workloadSelector.matchExpressions[0].values[1]",
		message:  "must be a label value",
	}),
	Entry("an expression has at most 64 values", rule{
		accepted: selector(expressions(expr("app.kubernetes.io/instance", "In", names("i", 64)...))),
		rejected: selector(expressions(expr("app.kubernetes.io/instance", "In", names("i", 65)...))),
		field:    "workloadSelector.matchExpressions[0].values",
		message:  "must have at most 64 items",
	}),
)

func selector(s map[string]any) map[string]any { return map[string]any{"workloadSelector": s} }

// labels is a matchLabels selector of key, value pairs.
func labels(kv ...string) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return map[string]any{"matchLabels": m}
}

func manyLabels(n int) map[string]any {
	m := map[string]any{}
	for _, key := range names("example.com/label", n) {
		m[key] = "x"
	}
	return map[string]any{"matchLabels": m}
}

func expressions(exprs ...any) map[string]any { return map[string]any{"matchExpressions": exprs} }

func expr(key, operator string, values ...string) any {
	e := map[string]any{"key": key, "operator": operator}
	if values != nil {
		e["values"] = toAny(values)
	} else if operator == "In" || operator == "NotIn" {
		e["values"] = []any{}
	}
	return e
}

// manyExpressions are n requirements that each require a label.
func manyExpressions(n int) []any {
	out := make([]any, 0, n)
	for _, key := range names("example.com/label", n) {
		out = append(out, expr(key, "Exists"))
	}
	return out
}

// names are n distinct names with a prefix.
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// dnsName is a valid DNS subdomain of exactly n characters.
func dnsName(n int) string {
	labels := make([]string, 0, n/64+1)
	for n > 0 {
		l := min(n, 63)
		if n-l == 1 { // leave no label of zero characters after a dot
			l--
		}
		labels = append(labels, strings.Repeat("d", l))
		n -= l + 1
	}
	return strings.Join(labels, ".")
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
