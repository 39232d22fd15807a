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

package v1alpha1

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

const multipleTemplates = "remediation.medik8s.io/multiple-templates-support"

// k8sClient talks to an API server that calls the webhook as config/webhook
// registers it, served by a manager like cmd/manager's.
var k8sClient client.Client

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	env, err := testenv.New()
	if err != nil {
		return 0, err
	}
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: []string{filepath.Join(testenv.RepoRoot(), "config", "webhook", "manifests.yaml")}}
	cfg, err := env.Start()
	if err != nil {
		return 0, err
	}
	defer func() { _ = env.Stop() }()
	k8sClient, err = client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return 0, err
	}

	opts := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:        env.Scheme,
		Metrics:       metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir}),
	})
	if err != nil {
		return 0, err
	}
	if err := SetupTemplateWebhookWithManager(mgr); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()
	if err := waitServing(net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort))); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// waitServing waits until the webhook server accepts TLS connections.
func waitServing(addr string) error {
	dialer := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // probing the test's own server
	return wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			conn, err := dialer.DialContext(ctx, "tcp", addr)
			if err != nil {
				return false, nil
			}
			return true, conn.Close()
		})
}

func newNamespace(g *WithT, name string) string {
	g.Expect(k8sClient.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

func newTemplate(ns, name string, spec s3gwv1alpha1.S3GWRemediationSpec) *s3gwv1alpha1.S3GWRemediationTemplate {
	return &s3gwv1alpha1.S3GWRemediationTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: s3gwv1alpha1.S3GWRemediationTemplateSpec{Template: s3gwv1alpha1.S3GWRemediationTemplateResource{Spec: spec}}}
}

// TestTemplatesAreAnnotatedAtAdmission: a template created or updated
// without the annotation has it on read-back, its spec untouched; a value
// the user set is kept.
func TestTemplatesAreAnnotatedAtAdmission(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(g, "admission")

	plain := newTemplate(ns, "plain", s3gwv1alpha1.S3GWRemediationSpec{ReplacementTimeout: &metav1.Duration{Duration: 2 * time.Minute},
		Fencing: s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false)}})
	g.Expect(k8sClient.Create(ctx, plain)).To(Succeed())
	got := &s3gwv1alpha1.S3GWRemediationTemplate{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(plain), got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(multipleTemplates, "true"))
	g.Expect(got.Spec.Template.Spec.ReplacementTimeout.Duration).To(Equal(2 * time.Minute))
	g.Expect(got.Spec.Template.Spec.Fencing.StorageIsolation).To(HaveValue(BeFalse()))

	got.Annotations = map[string]string{"team": "storage"}
	g.Expect(k8sClient.Update(ctx, got)).To(Succeed())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(plain), got)).To(Succeed())
	g.Expect(got.Annotations).To(Equal(map[string]string{"team": "storage", multipleTemplates: "true"}), "an update cannot drop it")

	own := newTemplate(ns, "own", s3gwv1alpha1.S3GWRemediationSpec{})
	own.Annotations = map[string]string{multipleTemplates: "yes"}
	g.Expect(k8sClient.Create(ctx, own)).To(Succeed())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(own), got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(multipleTemplates, "yes"))
}

// TestEscalationIsAdmittedRightAfterTheTemplates: templates and a
// NodeHealthCheck escalating through two of them, created back to back as
// one `kubectl apply` does, pass NHC's webhook rule for repeated kinds.
func TestEscalationIsAdmittedRightAfterTheTemplates(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(g, "apply")
	steps := make([]nhc.Step, 0, 2)
	for i, name := range []string{"strict", "lenient"} {
		g.Expect(k8sClient.Create(ctx, newTemplate(ns, name, s3gwv1alpha1.S3GWRemediationSpec{}))).To(Succeed())
		steps = append(steps, nhc.Step{Order: i, Timeout: 5 * time.Minute, Template: nhc.TemplateRef{
			APIVersion: s3gwv1alpha1.GroupVersion.String(), Kind: "S3GWRemediationTemplate", Namespace: ns, Name: name}})
	}
	// NHC's webhook lists every template of the kind in the cluster.
	g.Expect(nhc.ValidateEscalation(ctx, k8sClient, steps)).To(Succeed())
	e := &nhc.Emulator{Name: "escalation", Escalation: steps,
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "s3gw"}}}
	g.Expect(e.CreateNodeHealthCheck(ctx, k8sClient)).To(Succeed())
}
