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

package far

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// How FAR builds the agent's command line
// (api/v1alpha1/fenceagentsremediation_params.go), with its error texts.

var (
	// ErrMissingParams is errorMissingParams: no parameter, or none that
	// differs per node.
	ErrMissingParams = errors.New("invalid spec: mandatory parameters are missing")
	// ErrUnsupportedAction is ErrorUnsupportedAction.
	ErrUnsupportedAction = errors.New("FAR doesn't support any other action than `reboot` or `off`")
)

const actionParam = "--action"

// BuildParams is BuildFenceAgentParams: the agent's parameters for the
// CR's node, from the Secrets in the CR's own namespace and the spec, with
// --action=reboot when none is given. retry says whether FAR retries the
// error (a Secret it could not read) or gives the CR up (a spec it refuses).
func BuildParams(ctx context.Context, secrets client.Reader, far *FenceAgentsRemediation) (params map[string]string, retry bool, err error) {
	node := NodeName(far)
	fromSecrets, secretTemplated, err := collectSecretParams(ctx, secrets, far, node)
	if err != nil {
		return nil, true, err
	}
	params, err = validateParams(far, node, fromSecrets, secretTemplated)
	if err != nil {
		return nil, false, err
	}
	if _, ok := params[actionParam]; !ok {
		params[actionParam] = ActionReboot
	}
	return params, false, nil
}

// Command is the agent and its parameters as FAR passes them to exec
// (mapToSliceConvert): name=value, or the bare name for an empty value.
func Command(agent string, params map[string]string) []string {
	cmd := []string{agent}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if v := params[name]; v != "" {
			cmd = append(cmd, name+"="+v)
		} else {
			cmd = append(cmd, name)
		}
	}
	return cmd
}

// collectSecretParams is collectAllSecretParams: the shared Secret's
// parameters (templated with the node name) overridden by the node's own
// Secret's, both read from the CR's namespace. A Secret that is missing or
// cannot be read is an error. templated says whether the shared Secret
// holds a {{.NodeName}} template.
func collectSecretParams(ctx context.Context, secrets client.Reader, far *FenceAgentsRemediation, node string) (map[string]string, bool, error) {
	out := map[string]string{}
	templated := false
	if far.Spec.SharedSecretName != nil {
		shared, err := readSecret(ctx, secrets, far.Namespace, *far.Spec.SharedSecretName)
		if err != nil {
			return nil, false, err
		}
		for name, value := range shared {
			rendered, err := renderNodeName(value, node)
			if err != nil {
				return nil, false, err
			}
			templated = templated || rendered != value
			out[name] = rendered
		}
	}
	if name, ok := far.Spec.NodeSecretNames[node]; ok {
		own, err := readSecret(ctx, secrets, far.Namespace, name)
		if err != nil {
			return nil, false, err
		}
		maps.Copy(out, own)
	}
	return out, templated, nil
}

func readSecret(ctx context.Context, secrets client.Reader, namespace, name string) (map[string]string, error) {
	secret := &corev1.Secret{}
	if err := secrets.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return nil, fmt.Errorf("failed to get secret '%s' in namespace '%s': %w", name, namespace, err)
	}
	out := make(map[string]string, len(secret.Data))
	for k, v := range secret.Data {
		out[k] = string(v)
	}
	return out, nil
}

// validateParams is validateFenceAgentParams: shared parameters (templated,
// each defined once), node parameters for this node (overriding shared
// ones), Secret parameters (conflicting with neither), an action of reboot
// or off; and at least one parameter that differs per node — a node
// parameter (for any node) or a {{.NodeName}} template in the shared
// parameters or the shared Secret. A node's own Secret does not count.
func validateParams(far *FenceAgentsRemediation, node string, fromSecrets map[string]string, secretTemplated bool) (map[string]string, error) {
	params := map[string]string{}
	sharedTemplated := false
	for name, value := range far.Spec.SharedParameters {
		if err := validateAction(name, value); err != nil {
			return nil, err
		}
		rendered, err := renderNodeName(value, node)
		if err != nil {
			return nil, err
		}
		sharedTemplated = sharedTemplated || rendered != value
		params[name] = rendered
	}
	for name, perNode := range far.Spec.NodeParameters {
		value, ok := perNode[node]
		if !ok {
			continue
		}
		if err := validateAction(name, value); err != nil {
			return nil, err
		}
		params[name] = value
	}
	for name, value := range fromSecrets {
		if err := validateAction(name, value); err != nil {
			return nil, err
		}
		if _, dup := params[name]; dup {
			return nil, fmt.Errorf("invalid multiple definition of FAR parameter, parameter name: %s", name)
		}
		params[name] = value
	}
	nodeSpecific := len(far.Spec.NodeParameters) > 0 || sharedTemplated || secretTemplated
	if len(params) == 0 || !nodeSpecific {
		return nil, ErrMissingParams
	}
	return params, nil
}

// validateAction is validateFenceAction.
func validateAction(name, value string) error {
	if (name == "action" || name == actionParam) && value != "" && value != ActionReboot && value != ActionOff {
		return ErrUnsupportedAction
	}
	return nil
}

// renderNodeName is pkg/template's RenderParameterTemplate: a Go template
// with .NodeName.
func renderNodeName(value, node string) (string, error) {
	if node == "" {
		return "", errors.New("nodeName cannot be empty")
	}
	t, err := template.New("far-template").Parse(value)
	if err != nil {
		return "", fmt.Errorf("failed to parse template: %w", err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, struct{ NodeName string }{node}); err != nil {
		return "", fmt.Errorf("failed to execute template: %w", err)
	}
	return out.String(), nil
}
