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

package harness

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

// The benchmarks and the demo measure the sample NodeHealthCheck's wait.
func TestShippedUnhealthyDurationIsTheSample(t *testing.T) {
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "samples", "remediation_v1alpha1_nodehealthcheck.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sample struct {
		Spec struct {
			UnhealthyConditions []struct{ Type, Status, Duration string } `json:"unhealthyConditions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &sample); err != nil {
		t.Fatal(err)
	}
	for _, c := range sample.Spec.UnhealthyConditions {
		if c.Type != "Ready" || c.Status != "Unknown" {
			continue
		}
		if d, err := time.ParseDuration(c.Duration); err != nil || d != ShippedUnhealthyDuration {
			t.Errorf("the sample's Ready=Unknown duration is %q, ShippedUnhealthyDuration %s", c.Duration, ShippedUnhealthyDuration)
		}
		return
	}
	t.Error("the sample NodeHealthCheck has no Ready=Unknown condition")
}
