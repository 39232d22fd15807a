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

package olm_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
)

func TestMain(m *testing.M) {
	logrus.SetLevel(logrus.WarnLevel) // operator-registry logs every bundle it reads
	os.Exit(m.Run())
}

// repoRoot is the repository root, found from this file so tests do not
// depend on the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root, err := olm.FindRoot(filepath.Dir(file))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// loadBundle loads the committed bundle/ as operator-sdk and OLM would.
func loadBundle(t *testing.T) *manifests.Bundle {
	t.Helper()
	b, err := manifests.GetBundleFromDir(filepath.Join(repoRoot(t), olm.BundleDir))
	if err != nil {
		t.Fatalf("loading bundle/: %v (run 'make bundle')", err)
	}
	return b
}

// almExamples parses the CSV's alm-examples annotation.
func almExamples(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) []*unstructured.Unstructured {
	t.Helper()
	var raw []map[string]any
	if err := yaml.Unmarshal([]byte(csv.Annotations["alm-examples"]), &raw); err != nil {
		t.Fatalf("alm-examples: %v", err)
	}
	out := make([]*unstructured.Unstructured, 0, len(raw))
	for _, obj := range raw {
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	return out
}
