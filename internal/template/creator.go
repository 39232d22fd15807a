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

package template

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/medik8s/common/pkg/labels"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// DefaultName is the default template's name, in the manager's namespace.
const DefaultName = "s3gw-remediation-default-template"

// NamespaceEnv names the environment variable that holds the manager's
// namespace (set from metadata.namespace in config/manager).
const NamespaceEnv = "DEPLOYMENT_NAMESPACE"

// NewDefault is the default template: the default spec with the
// multiple-templates-support annotation, so that a NodeHealthCheck can
// reference it without writing one (the console form picks it when it is
// the kind's only instance), and with the gateways' images pre-pulled, as
// the chart's default template has them. The
// remediation.medik8s.io/default-template label follows SNR's default
// template; neither NHC nor the console reads it.
func NewDefault(namespace string) *s3gwv1alpha1.S3GWRemediationTemplate {
	t := &s3gwv1alpha1.S3GWRemediationTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: DefaultName,
			Labels: map[string]string{labels.DefaultTemplate: "true"}},
		Spec: s3gwv1alpha1.S3GWRemediationTemplateSpec{PrePull: s3gwv1alpha1.PrePullSpec{Enabled: true}},
	}
	AddMultipleTemplatesSupport(t)
	return t
}

// Creator creates the default template when the manager starts, unless a
// template of that name exists: it never overwrites a user's edits, and a
// deleted one comes back only at the next start. It runs on every replica
// (not only the leader), as creating is idempotent.
type Creator struct {
	Client    client.Client
	Namespace string
	Log       logr.Logger
	// Backoff retries a failed create (the API server may still be coming
	// up); the zero value means a few attempts over about half a minute.
	Backoff wait.Backoff
}

var (
	_ manager.Runnable               = &Creator{}
	_ manager.LeaderElectionRunnable = &Creator{}
)

// NeedLeaderElection is false: every replica may create the template.
func (c *Creator) NeedLeaderElection() bool { return false }

// Start creates the template if it is absent and returns. A failure is
// logged, not fatal: NodeHealthChecks can reference their own templates.
func (c *Creator) Start(ctx context.Context) error {
	backoff := c.Backoff
	if backoff.Steps == 0 {
		backoff = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 5}
	}
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		created, err := c.ensure(ctx)
		switch {
		case err != nil:
			c.Log.Error(err, "Cannot create the default S3GWRemediationTemplate; retrying")
			return false, nil
		case created:
			c.Log.Info("Created the default S3GWRemediationTemplate", "namespace", c.Namespace, "name", DefaultName)
		}
		return true, nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		c.Log.Error(err, "Gave up creating the default S3GWRemediationTemplate", "namespace", c.Namespace, "name", DefaultName)
	}
	return nil
}

// ensure creates the default template unless one of that name exists.
func (c *Creator) ensure(ctx context.Context) (bool, error) {
	err := c.Client.Create(ctx, NewDefault(c.Namespace))
	if apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	return err == nil, err
}
