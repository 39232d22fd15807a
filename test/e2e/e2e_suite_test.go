//go:build e2e

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

// Package e2e runs the operator end to end on the local cluster (package
// test/cluster) with the simulated Longhorn, the NodeHealthCheck emulator
// and compressed timings: one cluster for the whole suite, each spec on
// nodes of its own zone.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

// logDirEnv keeps the control-plane logs of the suite under that directory.
const logDirEnv = "LOCAL_CLUSTER_LOG_DIR"

var (
	env       *harness.Env
	suiteCtx  context.Context
	cancelEnv context.CancelFunc
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "s3gw-remediation e2e suite")
}

var _ = BeforeSuite(func() {
	log := funcr.New(func(prefix, args string) { _, _ = fmt.Fprintln(GinkgoWriter, prefix, args) }, funcr.Options{LogTimestamp: true})
	ctrl.SetLogger(log)
	klog.SetLogger(logr.Discard())

	opts := harness.Options{Cluster: cluster.Compressed(), Logger: log}
	// The specs with manager processes count the manager's writes.
	opts.Cluster.AuditPolicy = harness.ManagerAuditPolicy()
	if dir := os.Getenv(logDirEnv); dir != "" {
		opts.Cluster.LogDir = filepath.Join(dir, "e2e")
	}
	suiteCtx, cancelEnv = context.WithCancel(context.Background())
	started := time.Now()
	var err error
	env, err = harness.Start(suiteCtx, opts)
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("environment", env.Describe())
	By(fmt.Sprintf("Environment up in %s: %s", time.Since(started).Round(100*time.Millisecond), env.Describe()))
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
	if cancelEnv != nil {
		cancelEnv()
	}
})
