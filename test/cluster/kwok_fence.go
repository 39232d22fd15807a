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
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// kwokFenceName names the admission policy and its binding.
const kwokFenceName = "kwok-leaves-failed-nodes"

// fenceUnmanagedNodes makes a failed node stay failed. Removing
// ManagedNodeLabel stops kwok from playing the node's stages, but a stage
// kwok was playing at that moment and retries on a timeout keeps its copy
// of the node and patches it Ready minutes later (kwok v0.8.0
// pkg/kwok/controllers/node_controller.go, playStageWorker: a failed job is
// re-queued with backoff after watchResources cancelled the node's delay
// job on the label's removal). A busy machine times out such patches, and
// 1 000-node benchmarks saw failed nodes come back two minutes later. This
// ValidatingAdmissionPolicy refuses kwok's updates of a Node without the
// label, the way a dead kubelet writes nothing; a refusal is not retried.
func (c *Cluster) fenceUnmanagedNodes(ctx context.Context) error {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: kwokFenceName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
							Resources: []string{"nodes", "nodes/status"}},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "kwok", Expression: fmt.Sprintf("request.userInfo.username == %q", kwokUser),
			}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("object.metadata.?labels[%q].orValue('') == 'true'", ManagedNodeLabel),
				Message:    "the node failed (" + ManagedNodeLabel + " is not true): its simulated kubelet writes nothing",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: kwokFenceName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: kwokFenceName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	if err := c.client.Create(ctx, policy); err != nil {
		return fmt.Errorf("creating ValidatingAdmissionPolicy %s: %w", kwokFenceName, err)
	}
	if err := c.client.Create(ctx, binding); err != nil {
		return fmt.Errorf("creating ValidatingAdmissionPolicyBinding %s: %w", kwokFenceName, err)
	}
	return nil
}
