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

// Package manifests tests the manifests under config/ against a real API
// server: what the shipped roles allow and forbid.
package manifests

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

var (
	env       *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	ctx       context.Context
)

func TestManifests(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Manifests Suite")
}

var _ = BeforeSuite(func() {
	ctx = context.Background()
	started, err := testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	env, cfg, k8sClient = started.Env, started.Config, started.Client
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})

// load decodes a manifest from the repository into obj.
func load(relPath string, obj client.Object) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), relPath))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.UnmarshalStrict(data, obj)).To(Succeed())
}
