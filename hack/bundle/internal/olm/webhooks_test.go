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
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// certDir is where controller-runtime's webhook server reads its
// certificate by default, and where OLM mounts the one it issues.
const certDir = "/tmp/k8s-webhook-server/serving-certs"

// TestWebhookBecomesAWebhookDefinition: the bundle declares the mutating
// webhook for OLM, which creates its own Service and certificate, so the
// kustomize webhook Service is not shipped.
func TestWebhookBecomesAWebhookDefinition(t *testing.T) {
	b := loadBundle(t)
	csv := b.CSV
	deployments := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deployments) != 1 {
		t.Fatalf("%d deployments in the install strategy", len(deployments))
	}
	defs := csv.Spec.WebhookDefinitions
	if len(defs) != 1 {
		t.Fatalf("webhookdefinitions = %+v, want the template webhook", defs)
	}
	d := defs[0]
	if d.Type != "MutatingAdmissionWebhook" || d.DeploymentName != deployments[0].Name ||
		d.ContainerPort != 443 || d.TargetPort == nil || d.TargetPort.IntValue() != 9443 ||
		d.WebhookPath == nil || *d.WebhookPath != "/mutate-s3gw-remediation-medik8s-io-v1alpha1-s3gwremediationtemplate" ||
		d.FailurePolicy == nil || *d.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("webhook definition %+v", d)
	}
	if len(d.Rules) != 1 || len(d.Rules[0].Resources) != 1 || d.Rules[0].Resources[0] != "s3gwremediationtemplates" {
		t.Errorf("webhook rules %+v", d.Rules)
	}
	for _, obj := range b.Objects {
		if obj.GetKind() == "Service" && obj.GetName() == "s3gw-remediation-webhook-service" {
			t.Errorf("the bundle ships the webhook Service; OLM creates its own")
		}
	}
}

// TestCertManagerOverlayWiresTheCertificate checks config/with-cert-manager:
// cert-manager issues a certificate for the webhook Service's DNS names into
// the Secret the manager mounts where its webhook server reads it, and
// injects its CA into the webhook configuration, which calls that Service on
// the manager's webhook port.
func TestCertManagerOverlayWiresTheCertificate(t *testing.T) {
	objs := kustomize(t, filepath.Join(repoRoot(t), "config", "with-cert-manager"))
	var (
		cfg    admissionregistrationv1.MutatingWebhookConfiguration
		svc    corev1.Service
		deploy appsv1.Deployment
		cert   *unstructured.Unstructured
	)
	for _, u := range objs {
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			decode(t, u, &cfg)
		case "Service":
			if u.GetName() == "s3gw-remediation-webhook-service" {
				decode(t, u, &svc)
			}
		case "Deployment":
			decode(t, u, &deploy)
		case "Certificate":
			// The webhook's; the other is the metrics endpoint's.
			if u.GetName() == "s3gw-remediation-serving-cert" {
				cert = u
			}
		}
	}
	if cert == nil || svc.Name == "" || len(cfg.Webhooks) != 1 {
		t.Fatalf("config/with-cert-manager lacks the Certificate, the webhook Service or the webhook")
	}

	ref := cfg.Webhooks[0].ClientConfig.Service
	if ref.Name != svc.Name || ref.Namespace != svc.Namespace {
		t.Errorf("the webhook calls %s/%s, the Service is %s/%s", ref.Namespace, ref.Name, svc.Namespace, svc.Name)
	}
	if want := cert.GetNamespace() + "/" + cert.GetName(); cfg.Annotations["cert-manager.io/inject-ca-from"] != want {
		t.Errorf("inject-ca-from = %q, want %q", cfg.Annotations["cert-manager.io/inject-ca-from"], want)
	}
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if want := svc.Name + "." + svc.Namespace + ".svc"; len(dnsNames) == 0 || dnsNames[0] != want {
		t.Errorf("certificate dnsNames %v, want %s first", dnsNames, want)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(deploy.Spec.Template.Labels)) {
		t.Errorf("the webhook Service selects %v, the manager's pods are labelled %v", svc.Spec.Selector, deploy.Spec.Template.Labels)
	}

	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	volume := ""
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			volume = v.Name
		}
	}
	mounted, port := false, false
	for _, c := range deploy.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		for _, m := range c.VolumeMounts {
			mounted = mounted || (m.Name == volume && m.MountPath == certDir)
		}
		for _, p := range c.Ports {
			port = port || p.ContainerPort == svc.Spec.Ports[0].TargetPort.IntVal
		}
	}
	if volume == "" || !mounted {
		t.Errorf("the manager does not mount Secret %s at %s", secret, certDir)
	}
	if !port {
		t.Errorf("the manager exposes no port %d", svc.Spec.Ports[0].TargetPort.IntVal)
	}
}

func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resMap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("building %s: %v", dir, err)
	}
	out := make([]*unstructured.Unstructured, 0, resMap.Size())
	for _, res := range resMap.Resources() {
		raw, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func decode(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}
