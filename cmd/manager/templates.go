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

package main

import (
	"crypto/tls"
	"flag"
	"os"
	"path/filepath"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/s3gw-tech/s3gw-remediation/internal/template"
	webhookv1alpha1 "github.com/s3gw-tech/s3gw-remediation/internal/webhook/v1alpha1"
)

// webhookCertDir is where the webhook server's tls.crt and tls.key are:
// OLM mounts its certificate there, config/with-cert-manager the
// cert-manager Secret. Without them the manager serves no webhook.
var webhookCertDir string

func init() {
	flag.StringVar(&webhookCertDir, "webhook-cert-dir", filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs"),
		"Directory with the webhook server's tls.crt and tls.key; without them no webhook is served and the template controller annotates templates after admission.")
}

// webhookCertsPresent reports whether the webhook server can start.
func webhookCertsPresent() bool {
	for _, name := range []string{"tls.crt", "tls.key"} {
		if _, err := os.Stat(filepath.Join(webhookCertDir, name)); err != nil {
			return false
		}
	}
	return true
}

// newWebhookServer serves the admission webhooks on 9443 (the CSV's and
// config/webhook's targetPort) with the metrics server's TLS options.
func newWebhookServer(tlsOpts []func(*tls.Config)) webhook.Server {
	return webhook.NewServer(webhook.Options{Port: 9443, CertDir: webhookCertDir, TLSOpts: tlsOpts})
}

// setupTemplates wires what keeps S3GWRemediationTemplates usable by
// NodeHealthCheck, beside the template controller that annotates those
// admitted without a webhook (controllers.SetupReconcilers): the mutating
// webhook that annotates them at admission (when certificates are present),
// and the default template created at start-up.
func setupTemplates(mgr ctrl.Manager) error {
	if webhookCertsPresent() {
		if err := webhookv1alpha1.SetupTemplateWebhookWithManager(mgr); err != nil {
			return err
		}
	} else {
		setupLog.Info("No webhook certificate: serving no admission webhook; templates get multiple-templates support after admission",
			"dir", webhookCertDir)
	}
	namespace := os.Getenv(template.NamespaceEnv)
	if namespace == "" {
		setupLog.Info("Not creating the default template: its namespace, the manager's, is unknown", "env", template.NamespaceEnv)
		return nil
	}
	return mgr.Add(&template.Creator{Client: mgr.GetClient(), Namespace: namespace, Log: ctrl.Log.WithName("default-template")})
}
