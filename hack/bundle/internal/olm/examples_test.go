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
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// startAPIServer starts kube-apiserver and etcd with the project's CRDs.
// Binaries come from KUBEBUILDER_ASSETS, else bin/k8s; missing binaries fail
// the test, they never skip it.
func startAPIServer(t *testing.T) client.Client {
	t.Helper()
	root := repoRoot(t)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			t.Fatalf("%s not found in %s: run 'make envtest-assets' or set KUBEBUILDER_ASSETS", bin, assets)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestALMExamplesAreAccepted creates every alm-examples entry on a real API
// server, with strict field validation so an unknown or misspelled field
// fails too, and then the S3GWRemediation NodeHealthCheck would make from
// the example template.
func TestALMExamplesAreAccepted(t *testing.T) {
	examples := almExamples(t, loadBundle(t).CSV)
	c := startAPIServer(t)
	ctx := context.Background()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "alm-examples"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	strict := client.FieldValidation(metav1.FieldValidationStrict)

	templates := 0
	for _, ex := range examples {
		if ex.GetKind() == "S3GWRemediationTemplate" {
			templates++
		}
	}
	if templates == 0 {
		t.Error("alm-examples has no S3GWRemediationTemplate")
	}
	for _, ex := range examples {
		ex.SetNamespace(ns.Name)
		if err := c.Create(ctx, ex, strict); err != nil {
			t.Errorf("alm-examples %s %s rejected: %v", ex.GetKind(), ex.GetName(), err)
			continue
		}
		t.Logf("alm-examples %s %s accepted", ex.GetKind(), ex.GetName())
		if ex.GetKind() != "S3GWRemediationTemplate" {
			continue
		}

		// What NodeHealthCheck does: copy spec.template.spec into a
		// remediation of the template's kind minus "Template".
		spec, found, err := unstructured.NestedMap(ex.Object, "spec", "template", "spec")
		if err != nil || !found {
			t.Errorf("template %s has no spec.template.spec (%v)", ex.GetName(), err)
			continue
		}
		rem := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		rem.SetAPIVersion(ex.GetAPIVersion())
		rem.SetKind("S3GWRemediation")
		rem.SetNamespace(ns.Name)
		rem.SetName("worker-from-" + ex.GetName())
		rem.SetAnnotations(map[string]string{"remediation.medik8s.io/node-name": "worker"})
		if err := c.Create(ctx, rem, strict); err != nil {
			t.Errorf("S3GWRemediation made from template %s rejected: %v", ex.GetName(), err)
		}
	}
}
