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
	"strings"
	"testing"
	"time"
)

func TestPresetsPassValidation(t *testing.T) {
	for _, o := range []Options{KubernetesDefaults(), Compressed(), {}} {
		if err := o.withDefaults().validate(); err != nil {
			t.Errorf("%s: %v", o.Profile, err)
		}
	}
}

func TestValidateRejectsLeaseThatOutlivesGracePeriod(t *testing.T) {
	o := Compressed()
	o.NodeLeaseDuration = 40 * time.Second // renews every 10 s, the whole grace period
	if err := o.withDefaults().validate(); err == nil {
		t.Fatal("want an error for a lease renewed as rarely as the grace period")
	}
}

func TestDescribeNamesProfileAndTimings(t *testing.T) {
	got := Compressed().Describe()
	for _, want := range []string{
		"timings=compressed ",
		"node-monitor-grace-period=10s",
		"node-lease=4s(renew 1s)",
		"not-ready-toleration=10s",
		"unreachable-toleration=10s",
		"attach-detach-sync=1m0s",
		"force-detach=after 6m0s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe() = %q, missing %q", got, want)
		}
	}
}

func TestDescribeMarksTunedPresets(t *testing.T) {
	o := Compressed()
	o.DisableForceDetachOnTimeout = true
	got := o.Describe()
	if !strings.HasPrefix(got, "timings=compressed+custom ") || !strings.Contains(got, "force-detach=disabled") {
		t.Errorf("Describe() = %q, want a compressed+custom profile with force-detach disabled", got)
	}
}

func TestZeroOptionsDescribeKubernetesDefaults(t *testing.T) {
	if got, want := (Options{}).Describe(), KubernetesDefaults().Describe(); got != want {
		t.Errorf("Options{}.Describe() = %q, want %q", got, want)
	}
}

func TestControllerManagerArgsCarryTimings(t *testing.T) {
	o := Compressed().withDefaults()
	args := strings.Join(controllerManagerArgs(ports{controllerManager: 1}, &credentials{}, o), " ")
	for _, want := range []string{
		"--controllers=*",
		"--leader-elect=false",
		"--node-monitor-grace-period=10s",
		"--node-monitor-period=1s",
		"--attach-detach-reconcile-sync-period=1m0s",
		"--disable-force-detach-on-timeout=false",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("kube-controller-manager args %q lack %q", args, want)
		}
	}
}

func TestAPIServerArgsCarryTolerations(t *testing.T) {
	o := Compressed().withDefaults()
	args := strings.Join(apiserverArgs("/d", "/d/logs", ports{}, &credentials{}, o), " ")
	for _, want := range []string{
		"--default-not-ready-toleration-seconds=10",
		"--default-unreachable-toleration-seconds=10",
		"--bind-address=127.0.0.1",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("kube-apiserver args %q lack %q", args, want)
		}
	}
}

func TestAPIServerAuditsOnlyWithAPolicy(t *testing.T) {
	o := Compressed().withDefaults()
	if args := strings.Join(apiserverArgs("/d", "/d/logs", ports{}, &credentials{}, o), " "); strings.Contains(args, "--audit") {
		t.Errorf("kube-apiserver audits without a policy: %q", args)
	}
	o.AuditPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"
	args := strings.Join(apiserverArgs("/d", "/l", ports{}, &credentials{}, o), " ")
	for _, want := range []string{"--audit-policy-file=/d/audit-policy.yaml", "--audit-log-path=/l/audit.log"} {
		if !strings.Contains(args, want) {
			t.Errorf("kube-apiserver args %q lack %q", args, want)
		}
	}
}
