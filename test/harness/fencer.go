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

package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/far"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// The FenceAgentsRemediation kind and the condition FAR sets once its fence
// agent exited 0.
const (
	FARAPIVersion      = far.APIVersion
	FARKind            = far.Kind
	FARFencedCondition = far.FenceAgentActionSucceededType
	// FARAgent is the fence agent the FAR templates run: Debian's
	// fence-agents package ships it.
	FARAgent = "fence_dummy"
	// defaultFARBootTime is how long a machine FAR rebooted takes to run
	// its kubelet again.
	defaultFARBootTime = 30 * time.Second
)

// FARRemediator is the template entry that accepts a FenceAgentsRemediation
// for the node, once its fence agent succeeded, as fencing evidence.
func FARRemediator() s3gwv1alpha1.RemediatorEvidence {
	return s3gwv1alpha1.RemediatorEvidence{APIVersion: FARAPIVersion, Kind: FARKind, ConditionType: FARFencedCondition}
}

// FARDelegate is the fencing delegate for a FenceAgentsRemediationTemplate
// from CreateFARTemplate, in the template's namespace, where the operator
// creates the FenceAgentsRemediation too.
func FARDelegate(template nhc.TemplateRef) *s3gwv1alpha1.DelegateFencing {
	return &s3gwv1alpha1.DelegateFencing{APIVersion: template.APIVersion, Kind: template.Kind, Name: template.Name,
		Namespace: template.Namespace, ConditionType: FARFencedCondition}
}

// FARTemplate is a FenceAgentsRemediationTemplate running fence_dummy, set
// up as a user sets up FAR with a real agent: the agent's connection
// parameters in a Secret beside the template, the action and the plug
// ({{.NodeName}}) in its shared parameters.
type FARTemplate struct {
	// Namespace and Name of the template; the Secret is <Name>-credentials
	// in the same namespace. The namespace defaults to FARNamespace.
	Namespace, Name string
	// Action is "off" (the default: the node stays down until the test
	// recovers it) or "reboot" (the node comes back after
	// Options.FARBootTime).
	Action string
	// Strategy is FAR's remediationStrategy: ResourceDeletion (default) or
	// OutOfServiceTaint.
	Strategy string
	// Delay is fence_dummy's --delay: the agent waits that long before it
	// acts.
	Delay time.Duration
	// Fail makes every attempt fail (fence_dummy --type fail).
	Fail bool
	// RetryCount, RetryInterval and Timeout are FAR's; zero means FAR's
	// defaults (5, 5 s, 60 s).
	RetryCount             int
	RetryInterval, Timeout time.Duration
}

// CreateFARTemplate creates the template and its Secret. The Secret holds
// fence_dummy's status file, one per node ({{.NodeName}}), which says "off"
// once the agent powered the node off.
func (e *Env) CreateFARTemplate(ctx context.Context, t FARTemplate) (nhc.TemplateRef, error) {
	if e.powerDir == "" {
		return nhc.TemplateRef{}, errors.New("FAR runs with the emulated NodeHealthCheck only")
	}
	if err := far.RequireAgent(FARAgent); err != nil {
		return nhc.TemplateRef{}, err
	}
	if t.Namespace == "" {
		t.Namespace = FARNamespace
	}
	if t.Action == "" {
		t.Action = far.ActionOff
	}
	if err := e.ensureNamespace(ctx, t.Namespace); err != nil {
		return nhc.TemplateRef{}, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name + "-credentials"},
		StringData: map[string]string{"--status-file": filepath.Join(e.powerDir, "{{.NodeName}}.status")},
	}
	if err := e.Client.Create(ctx, secret); err != nil {
		return nhc.TemplateRef{}, fmt.Errorf("creating Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	params := map[string]string{"--type": "file", "--action": t.Action, "--plug": "{{.NodeName}}"}
	if t.Fail {
		params["--type"], params["--power-timeout"] = "fail", "1"
	}
	if t.Delay > 0 {
		params["--delay"] = strconv.Itoa(int(t.Delay.Seconds()))
	}
	spec := far.Spec{Agent: FARAgent, SharedParameters: params, SharedSecretName: ptr.To(secret.Name),
		RemediationStrategy: t.Strategy, RetryCount: t.RetryCount}
	if t.RetryInterval > 0 {
		spec.RetryInterval = &metav1.Duration{Duration: t.RetryInterval}
	}
	if t.Timeout > 0 {
		spec.Timeout = &metav1.Duration{Duration: t.Timeout}
	}
	template, err := far.NewTemplate(t.Namespace, t.Name, spec)
	if err != nil {
		return nhc.TemplateRef{}, err
	}
	if err := e.Client.Create(ctx, template); err != nil {
		return nhc.TemplateRef{}, fmt.Errorf("creating %s %s/%s: %w", far.TemplateKind, t.Namespace, t.Name, err)
	}
	return nhc.TemplateRef{APIVersion: FARAPIVersion, Kind: far.TemplateKind, Namespace: t.Namespace, Name: t.Name}, nil
}

// power applies a fence agent's action to the node, as its BMC would: off
// stops its kubelet until the test recovers it; reboot stops it and starts
// it again after the boot time. The agent has exited by then: FAR learns of
// its success while the machine boots.
func (e *Env) power(ctx context.Context, node, action string) {
	log := e.log.WithValues("node", node, "action", action)
	log.Info("Fence agent acted on the node")
	if err := e.Cluster.FailNode(ctx, node); err != nil {
		log.Error(err, "Failed to stop the fenced node's kubelet")
		return
	}
	if action != far.ActionReboot {
		return
	}
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(e.farBootTime()):
		}
		if err := e.Cluster.RecoverNode(ctx, node); err != nil && ctx.Err() == nil {
			log.Error(err, "Failed to boot the rebooted node")
		}
	}()
}

// farBootTime is Options.FARBootTime or its default.
func (e *Env) farBootTime() time.Duration {
	if e.opts.FARBootTime > 0 {
		return e.opts.FARBootTime
	}
	return defaultFARBootTime
}

// powerOn records the node's machine as on for fence_dummy, which reads a
// missing status file as off (and would then report "Already OFF" without
// acting).
func (e *Env) powerOn(node string) error {
	if e.powerDir == "" {
		return nil
	}
	return os.WriteFile(e.powerStatusFile(node), []byte("on"), 0o600)
}

func (e *Env) powerStatusFile(node string) string {
	return filepath.Join(e.powerDir, node+".status")
}

// PowerStatus is the node's power state as fence_dummy last wrote it ("off",
// "on"), or "" if no agent ever acted on the node.
func (e *Env) PowerStatus(node string) (string, error) {
	data, err := os.ReadFile(e.powerStatusFile(node))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(data), err
}
