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

package e2e

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v4/pkg/action"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/postrenderer"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
)

// helmTimeout bounds an install's or upgrade's wait for its resources.
const helmTimeout = 2 * time.Minute

// Helm runs `helm install`, `upgrade` and `uninstall` in one namespace, as
// the helm CLI does with --kubeconfig and --namespace.
type Helm struct {
	cfg       *action.Configuration
	namespace string
}

// NewHelm returns a Helm for the cluster of kubeconfig, storing releases in
// Secrets as the CLI does.
func NewHelm(kubeconfig, namespace string) (*Helm, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &namespace
	cfg := helmchart.Quiet()
	if err := cfg.Init(flags, namespace, "secret"); err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	return &Helm{cfg: cfg, namespace: namespace}, nil
}

// Install is `helm install --create-namespace --wait [--post-renderer]`.
func (h *Helm) Install(ctx context.Context, release string, ch *chartv2.Chart, values map[string]any, post postrenderer.PostRenderer) error {
	in := action.NewInstall(h.cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = release, h.namespace, true
	in.WaitStrategy, in.Timeout = kube.StatusWatcherStrategy, helmTimeout
	in.PostRenderer = post
	if _, err := in.RunWithContext(ctx, ch, values); err != nil {
		return fmt.Errorf("helm install %s: %w", release, err)
	}
	return nil
}

// Adopt is `helm install --take-ownership --force-conflicts --wait`: the
// release takes over objects that exist without Helm's labels (CRDs a
// chart's crds/ or kubectl installed), and its server-side apply the fields
// their creator manages.
func (h *Helm) Adopt(ctx context.Context, release string, ch *chartv2.Chart, values map[string]any) error {
	in := action.NewInstall(h.cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = release, h.namespace, true
	in.WaitStrategy, in.Timeout = kube.StatusWatcherStrategy, helmTimeout
	in.TakeOwnership, in.ForceConflicts = true, true
	if _, err := in.RunWithContext(ctx, ch, values); err != nil {
		return fmt.Errorf("helm install --take-ownership --force-conflicts %s: %w", release, err)
	}
	return nil
}

// Upgrade is `helm upgrade --wait [--post-renderer]`.
func (h *Helm) Upgrade(ctx context.Context, release string, ch *chartv2.Chart, values map[string]any, post postrenderer.PostRenderer) error {
	up := action.NewUpgrade(h.cfg)
	up.Namespace = h.namespace
	up.WaitStrategy, up.Timeout = kube.StatusWatcherStrategy, helmTimeout
	up.PostRenderer = post
	if _, err := up.RunWithContext(ctx, release, ch, values); err != nil {
		return fmt.Errorf("helm upgrade %s: %w", release, err)
	}
	return nil
}

// Uninstall is `helm uninstall --wait`.
func (h *Helm) Uninstall(release string) error {
	un := action.NewUninstall(h.cfg)
	un.WaitStrategy, un.Timeout = kube.StatusWatcherStrategy, helmTimeout
	un.DeletionPropagation = "background" // the CLI's default
	if _, err := un.Run(release); err != nil {
		return fmt.Errorf("helm uninstall %s: %w", release, err)
	}
	return nil
}
