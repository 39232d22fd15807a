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
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

var (
	env       *envtest.Environment
	k8sClient client.Client
	ctx       context.Context
)

func TestAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "API (CRD schema) Suite")
}

var _ = BeforeSuite(func() {
	ctx = context.Background()
	started, err := testenv.Start()
	Expect(err).NotTo(HaveOccurred())
	env, k8sClient = started.Env, started.Client
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})
