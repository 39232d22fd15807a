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

package cluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
)

// TestAuditLogAttributesRequestsToUsers proves that the audit log counts a
// client's requests exactly: every request of an extra user, whether it
// connects through RESTConfigFor or a kubeconfig, and nobody else's.
func TestAuditLogAttributesRequestsToUsers(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	opts := Compressed()
	opts.Users = []string{"probe", "other"}
	opts.AuditLog = true
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { assertStopLeavesNoProcess(t, c) })

	probeCfg, err := c.RESTConfigFor("probe")
	if err != nil {
		t.Fatal(err)
	}
	path, err := c.KubeconfigFor("other")
	if err != nil {
		t.Fatal(err)
	}
	otherCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for cfg, n := range map[string]int{"probe": 3, "other": 2} {
		rc := probeCfg
		if cfg == "other" {
			rc = otherCfg
		}
		cl, err := client.New(rc, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := cl.List(ctx, &corev1.NamespaceList{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.RESTConfigFor("nobody"); err == nil {
		t.Error("RESTConfigFor an unknown user succeeded")
	}

	for user, want := range map[string]int{"probe": 3, "other": 2} {
		reqs, err := apiaudit.Read(c.AuditLogPath(), apiaudit.ByUser(user))
		if err != nil {
			t.Fatal(err)
		}
		got := apiaudit.Tally(apiaudit.Between(reqs, began, time.Now()))
		// Besides its lists, a new client only asks for API discovery.
		if got.ByKind["list namespaces"] != want || got.Total != want+got.ByKind["get (non-resource)"] {
			t.Errorf("requests of %s = %s, want exactly %d list namespaces and discovery", user, got, want)
		}
	}
}
