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

	// namespaces
	Entry("namespaces are namespace names", rule{
		accepted: map[string]any{"namespaces": []any{"s3gw", "s3gw-2"}},
		rejected: map[string]any{"namespaces": []any{"s3gw", "S3GW_prod"}},
		field:    "namespaces[1]",
		message:  "must be a namespace name: at most 63 lowercase letters, digits and '-', beginning and ending with a letter or digit",
	}),
	Entry("a namespace has at most 63 characters", rule{
		accepted: map[string]any{"namespaces": []any{strings.Repeat("a", 63)}},
		rejected: map[string]any{"namespaces": []any{strings.Repeat("a", 64)}},
		field:    "namespaces[0]",
		message:  "may not be more than 63 bytes",
	}),
	Entry("namespaces are listed once", rule{
		accepted: map[string]any{"namespaces": []any{"s3gw", "s3gw-2"}},
		rejected: map[string]any{"namespaces": []any{"s3gw", "s3gw"}},
		field:    "namespaces[1]",
		message:  `Duplicate value: "s3gw"`,
	}),
	Entry("at most 64 namespaces", rule{
		accepted: map[string]any{"namespaces": toAny(names("ns", 64))},
		rejected: map[string]any{"namespaces": toAny(names("ns", 65))},
		field:    "namespaces",
		message:  "must have at most 64 items",
	}),

	// fencing
	Entry("fencing.mode is known", rule{
		accepted: fencing(map[string]any{"mode": "Disabled"}),
		rejected: fencing(map[string]any{"mode": "Maybe"}),
		field:    "fencing.mode",
		message:  `Unsupported value: "Maybe": supported values: "RequireEvidence", "Disabled"`,
	}),
	Entry("RequireEvidence has an evidence source: remediators", rule{
		accepted: fencing(map[string]any{"outOfServiceTaint": false, "storageIsolation": false, "remediators": []any{remediator(nil)}}),
		rejected: fencing(map[string]any{"outOfServiceTaint": false, "storageIsolation": false}),
		field:    "fencing",
		message:  "fencing.mode RequireEvidence needs at least one evidence source: outOfServiceTaint, storageIsolation, remediators or delegate",
	}),
	Entry("RequireEvidence has an evidence source: a delegate", rule{
		accepted: fencing(map[string]any{"outOfServiceTaint": false, "storageIsolation": false, "delegate": delegate(nil)}),
		rejected: fencing(map[string]any{"outOfServiceTaint": false, "storageIsolation": false, "remediators": []any{}}),
		field:    "fencing",
		message:  "fencing.mode RequireEvidence needs at least one evidence source",
	}),
	Entry("at most 8 remediators", rule{
		accepted: fencing(map[string]any{"remediators": repeat(remediator(nil), 8)}),
		rejected: fencing(map[string]any{"remediators": repeat(remediator(nil), 9)}),
		field:    "fencing.remediators",
		message:  "must have at most 8 items",
	}),
	Entry("a remediator has a kind", rule{
		accepted: fencing(map[string]any{"remediators": []any{remediator(nil)}}),
		rejected: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"kind": nil})}}),
		field:    "fencing.remediators[0].kind",
		message:  "Required value",
	}),
	Entry("a remediator's apiVersion is group/version", rule{
		accepted: fencing(map[string]any{"remediators": []any{remediator(nil),
			remediator(map[string]any{"apiVersion": "v1", "kind": "NodeFence"})}}),
		rejected: fencing(map[string]any{"remediators": []any{remediator(nil),
			remediator(map[string]any{"apiVersion": "fence-agents-remediation.medik8s.io"})}}),
		field:   "fencing.remediators[1].apiVersion",
		message: "must be group/version, e.g. fence-agents-remediation.medik8s.io/v1alpha1: a lowercase DNS subdomain, '/' and a version such as v1alpha1 (the version alone for the core group)",
	}),
	Entry("a remediator's apiVersion has one slash", rule{
		accepted: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"apiVersion": "self-node-remediation.medik8s.io/v1alpha1"})}}),
		rejected: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"apiVersion": "a/b/c"})}}),
		field:    "fencing.remediators[0].apiVersion",
		message:  "must be group/version",
	}),
	Entry("a remediator's kind is UpperCamelCase", rule{
		accepted: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"kind": "SelfNodeRemediation"})}}),
		rejected: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"kind": "fenceAgentsRemediation"})}}),
		field:    "fencing.remediators[0].kind",
		message:  "must be a kind in UpperCamelCase: a capital letter, then letters and digits",
	}),
	Entry("a remediator is a CR kind, not a template kind", rule{
		accepted: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"kind": "FenceAgentsRemediation"})}}),
		rejected: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"kind": "FenceAgentsRemediationTemplate"})}}),
		field:    "fencing.remediators[0].kind",
		message:  "must be the kind of the remediation CR, not of its template, e.g. FenceAgentsRemediation; a template goes in fencing.delegate",
	}),
	Entry("a remediator's conditionType is a condition type", rule{
		accepted: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"conditionType": "example.com/Fenced"})}}),
		rejected: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"conditionType": "Fence Agent Action Succeeded"})}}),
		field:    "fencing.remediators[0].conditionType",
		message:  "must be a condition type, e.g. Succeeded: a name of at most 63 letters, digits, '-', '_' and '.' that begins and ends with a letter or digit, after an optional DNS subdomain and '/'",
	}),
	Entry("a remediator's conditionType is left out rather than empty", rule{
		accepted: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"conditionType": nil})}}),
		rejected: fencing(map[string]any{"remediators": []any{remediator(map[string]any{"conditionType": ""})}}),
		field:    "fencing.remediators[0].conditionType",
		message:  "must be a condition type",
	}),
	Entry("a delegate needs RequireEvidence", rule{
		accepted: fencing(map[string]any{"delegate": delegate(nil)}),
		rejected: fencing(map[string]any{"mode": "Disabled", "delegate": delegate(nil)}),
		field:    "fencing.delegate",
		message:  "fencing.delegate requires fencing.mode RequireEvidence",
	}),
	Entry("a delegate's apiVersion is group/version", rule{
		accepted: fencing(map[string]any{"delegate": delegate(nil)}),
		rejected: fencing(map[string]any{"delegate": delegate(map[string]any{"apiVersion": "fence-agents-remediation.medik8s.io/V1alpha1"})}),
		field:    "fencing.delegate.apiVersion",
		message:  "must be group/version",
	}),
	Entry("a delegate's kind is UpperCamelCase", rule{
		accepted: fencing(map[string]any{"delegate": delegate(map[string]any{"kind": "SelfNodeRemediationTemplate"})}),
		rejected: fencing(map[string]any{"delegate": delegate(map[string]any{"kind": "Fence-Agents-RemediationTemplate"})}),
		field:    "fencing.delegate.kind",
		message:  "must be a kind in UpperCamelCase",
	}),
	Entry("a delegate is a template kind", rule{
		accepted: fencing(map[string]any{"delegate": delegate(nil)}),
		rejected: fencing(map[string]any{"delegate": delegate(map[string]any{"kind": "FenceAgentsRemediation"})}),
		field:    "fencing.delegate.kind",
		message:  "must be a remediation template kind ending in 'Template', e.g. FenceAgentsRemediationTemplate",
	}),
	Entry("a delegate's kind names more than 'Template'", rule{
		accepted: fencing(map[string]any{"delegate": delegate(map[string]any{"kind": "FTemplate"})}),
		rejected: fencing(map[string]any{"delegate": delegate(map[string]any{"kind": "Template"})}),
		field:    "fencing.delegate.kind",
		message:  "must be a remediation template kind ending in 'Template'",
	}),
	Entry("a delegate's name is an object name", rule{
		accepted: fencing(map[string]any{"delegate": delegate(map[string]any{"name": "far-ipmi.v2"})}),
		rejected: fencing(map[string]any{"delegate": delegate(map[string]any{"name": "far_ipmi"})}),
		field:    "fencing.delegate.name",
		message:  "must be an object name: at most 253 lowercase letters, digits, '-' and '.', beginning and ending with a letter or digit",
	}),
	// The delegate's template, and the CR made from it, may sit in any
	// namespace (the fencer's): only the name's form is checked.
	Entry("a delegate's namespace is a namespace name", rule{
		accepted: fencing(map[string]any{"delegate": delegate(map[string]any{"namespace": "fencing-system"})}),
		rejected: fencing(map[string]any{"delegate": delegate(map[string]any{"namespace": "fencing.system"})}),
		field:    "fencing.delegate.namespace",
		message:  "must be a namespace name: at most 63 lowercase letters, digits and '-', beginning and ending with a letter or digit; or leave it out",
	}),
	Entry("a delegate's namespace may be empty", rule{
		accepted: fencing(map[string]any{"delegate": delegate(map[string]any{"namespace": ""})}),
		rejected: fencing(map[string]any{"delegate": delegate(map[string]any{"namespace": strings.Repeat("n", 64)})}),
		field:    "fencing.delegate.namespace",
		message:  "may not be more than 63 bytes",
	}),
	Entry("a delegate's conditionType is a condition type", rule{
		accepted: fencing(map[string]any{"delegate": delegate(map[string]any{"conditionType": "FenceAgentActionSucceeded"})}),
		rejected: fencing(map[string]any{"delegate": delegate(map[string]any{"conditionType": "FenceAgentActionSucceeded=True"})}),
		field:    "fencing.delegate.conditionType",
		message:  "must be a condition type",
	}),

	// release
	Entry("release.strategy is known", rule{
		accepted: release(map[string]any{"strategy": "DeleteVolumeAttachment"}),
		rejected: release(map[string]any{"strategy": "Yolo"}),
		field:    "release.strategy",
		message:  `Unsupported value: "Yolo": supported values: "ControllerDetach", "DeleteVolumeAttachment", "OutOfServiceTaint"`,
	}),
	Entry("the OutOfServiceTaint strategy needs RequireEvidence", rule{
		accepted: map[string]any{"release": map[string]any{"strategy": "OutOfServiceTaint"}},
		rejected: map[string]any{"release": map[string]any{"strategy": "OutOfServiceTaint"}, "fencing": map[string]any{"mode": "Disabled"}},
		field:    "release.strategy",
		message:  "release.strategy OutOfServiceTaint requires fencing.mode RequireEvidence: it is only for nodes proven down",
	}),
	Entry("release.acceptStaleReadsWithoutRevisionCounter is a boolean", rule{
		accepted: release(map[string]any{"acceptStaleReadsWithoutRevisionCounter": true}),
		rejected: release(map[string]any{"acceptStaleReadsWithoutRevisionCounter": "yes"}),
		field:    "release.acceptStaleReadsWithoutRevisionCounter",
		message:  "must be of type boolean",
	}),
	Entry("release.longhornNamespace is a namespace name", rule{
		accepted: release(map[string]any{"longhornNamespace": "storage"}),
		rejected: release(map[string]any{"longhornNamespace": "Longhorn-System"}),
		field:    "release.longhornNamespace",
		message:  "must be a namespace name",
	}),
	Entry("release.longhornNamespace is not empty", rule{
		accepted: release(map[string]any{"longhornNamespace": "longhorn-system"}),
		rejected: release(map[string]any{"longhornNamespace": ""}),
		field:    "release.longhornNamespace",
		message:  "should be at least 1 chars long",
	}),

	durationRules("releaseTimeout"),
	durationRules("replacementTimeout"),
)

// durationRules are the rules of a timeout field.
func durationRules(field string) []TableEntry {
	timeout := func(v string) map[string]any { return map[string]any{field: v} }
	return []TableEntry{
		Entry(field+" is a Go duration", rule{
			accepted: timeout("1h30m"),
			rejected: timeout("3d"),
			field:    field,
			message:  "must be a duration such as 90s, 2m or 1h30m: numbers of at most 6 digits with units h, m, s or ms, without spaces (no d for days)",
		}),
		Entry(field+" has no spaces", rule{
			accepted: timeout("1.5m"),
			rejected: timeout("5 minutes"),
			field:    field,
			message:  "must be a duration such as 90s",
		}),
		Entry(field+" is at least 1s", rule{
			accepted: timeout("1s"),
			rejected: timeout("500ms"),
			field:    field,
			message:  "must be between 1s and 24h",
		}),
		Entry(field+" is at most 24h", rule{
			accepted: timeout("24h"),
			rejected: timeout("24h0m1s"),
			field:    field,
			message:  "must be between 1s and 24h",
		}),
		Entry(field+" has at most 20 characters", rule{
			accepted: timeout("1h1m1s1ms1h1m1s1ms"),
			rejected: timeout("1h1m1s1ms1h1m1s1ms1s1s"),
			field:    field,
			message:  "may not be more than 20 bytes",
		}),
	}
}

func selector(s map[string]any) map[string]any { return map[string]any{"workloadSelector": s} }

func fencing(f map[string]any) map[string]any { return map[string]any{"fencing": f} }

func release(r map[string]any) map[string]any { return map[string]any{"release": r} }

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

// remediator is FAR as evidence, with fields replaced (nil removes one).
func remediator(with map[string]any) any {
	return override(map[string]any{"apiVersion": "fence-agents-remediation.medik8s.io/v1alpha1",
		"kind": "FenceAgentsRemediation", "conditionType": "FenceAgentActionSucceeded"}, with)
}

// delegate is a FAR template as delegate, with fields replaced.
func delegate(with map[string]any) any {
	return override(map[string]any{"apiVersion": "fence-agents-remediation.medik8s.io/v1alpha1",
		"kind": "FenceAgentsRemediationTemplate", "name": "far-ipmi"}, with)
}

func override(base, with map[string]any) map[string]any {
	for k, v := range with {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	return base
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

func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
