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

// Package helmchart lints and renders charts/s3gw-remediation with the
// Helm SDK, as `helm lint --strict` and `helm template --include-crds` do.
package helmchart

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/generate"
	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/manifests"
)

// ReleaseName is the release name the docs use; names do not depend on it.
const ReleaseName = "s3gw-remediation"

// KubeVersion is the local cluster's Kubernetes release, for Capabilities.
const KubeVersion = "v1.37.2"

// CRDReleaseName is the companion chart's release name, as Rancher names
// it (its catalog.cattle.io/release-name).
const CRDReleaseName = "s3gw-remediation-crd"

// Dir is the chart's directory under root; CRDDir its companion's.
func Dir(root string) string { return filepath.Join(root, generate.ChartDir) }

// CRDDir is the companion chart with the CRDs.
func CRDDir(root string) string { return filepath.Join(root, generate.CRDChartDir) }

// Load reads the chart from root.
func Load(root string) (*chartv2.Chart, error) {
	return loader.LoadDir(Dir(root))
}

// LoadCRDs reads the companion chart from root.
func LoadCRDs(root string) (*chartv2.Chart, error) {
	return loader.LoadDir(CRDDir(root))
}

// Quiet is a Helm configuration that logs nothing.
func Quiet() *action.Configuration {
	return action.NewConfiguration(action.ConfigurationSetLogger(slog.NewTextHandler(io.Discard, nil)))
}

// NodeHealthCheckAPI is NodeHealthCheck's kind as Helm's capabilities
// list it where its CRD is installed.
const NodeHealthCheckAPI = "remediation.medik8s.io/v1alpha1/NodeHealthCheck"

// Render renders the chart with values into namespace, CRDs first, as
// `helm template --include-crds --api-versions ...` does, and returns the
// objects and NOTES.txt. apiVersions are served besides Kubernetes' own
// (NodeHealthCheckAPI: NodeHealthCheck is installed).
// The release is named after the chart.
func Render(ch *chartv2.Chart, namespace string, values map[string]any, apiVersions ...string) ([]*unstructured.Unstructured, string, error) {
	kube, err := common.ParseKubeVersion(KubeVersion)
	if err != nil {
		return nil, "", err
	}
	install := action.NewInstall(Quiet())
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = ch.Name()
	install.Namespace = namespace
	install.Replace = true
	install.IncludeCRDs = true
	install.KubeVersion = kube
	install.APIVersions = apiVersions
	rel, err := install.RunWithContext(context.Background(), ch, values)
	if err != nil {
		return nil, "", err
	}
	acc, err := release.NewAccessor(rel)
	if err != nil {
		return nil, "", err
	}
	objs, err := manifests.Parse([]byte(acc.Manifest()))
	if err != nil {
		return nil, "", fmt.Errorf("parsing the rendered chart: %w", err)
	}
	return objs, acc.Notes(), nil
}

// Package writes every chart of root's charts/ into out as a versioned
// archive, as `helm package` does, and returns the archives' paths.
func Package(root, out string) ([]string, error) {
	charts, err := filepath.Glob(filepath.Join(root, "charts", "*", "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	if len(charts) == 0 {
		return nil, fmt.Errorf("no chart under %s", filepath.Join(root, "charts"))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(charts))
	for _, c := range charts {
		p := action.NewPackage()
		p.Destination = out
		path, err := p.Run(filepath.Dir(c), nil)
		if err != nil {
			return nil, fmt.Errorf("packaging %s: %w", filepath.Dir(c), err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// Lint runs Helm's chart linter on the chart in dir with values and
// returns its messages of at least warning severity (`helm lint --strict`
// fails on those).
func Lint(dir, namespace string, values map[string]any) ([]support.Message, error) {
	kube, err := common.ParseKubeVersion(KubeVersion)
	if err != nil {
		return nil, err
	}
	result := lint.RunAll(dir, values, namespace, lint.WithKubeVersion(kube))
	var out []support.Message
	for _, m := range result.Messages {
		if m.Severity >= support.WarningSev {
			out = append(out, m)
		}
	}
	return out, nil
}
