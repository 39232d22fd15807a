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

package fencing

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// The API server refuses such an apiVersion; one stored before that rule
// existed is reported by kind, without reading anything.
func TestRemediatorsReportsAnUnparsableAPIVersion(t *testing.T) {
	g := NewWithT(t)
	listed := []s3gwv1alpha1.RemediatorEvidence{{APIVersion: "a/b/c", Kind: "Broken"}}
	out, invalid, err := Remediators(context.Background(), nil, listed, "worker-1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(BeEmpty())
	g.Expect(invalid).To(HaveKeyWithValue("Broken", ContainSubstring(`invalid apiVersion "a/b/c"`)))
	g.Expect(RemediatorKinds(listed)).To(BeEmpty())
}
