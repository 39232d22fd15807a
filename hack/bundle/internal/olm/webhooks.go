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

package olm

import (
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// webhookDefinitions turns config/webhook's MutatingWebhookConfiguration
// into the CSV's webhookdefinitions, as operator-sdk does: OLM then creates
// the webhook configuration, a Service for the deployment and a serving
// certificate it mounts where controller-runtime reads it
// (/tmp/k8s-webhook-server/serving-certs). The Service's port becomes the
// containerPort, its targetPort the targetPort.
func webhookDefinitions(in *inputs, deployment string) ([]operatorsv1alpha1.WebhookDescription, error) {
	var out []operatorsv1alpha1.WebhookDescription
	for _, u := range in.mutatingWebhooks {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := fromUnstructured(u, cfg); err != nil {
			return nil, err
		}
		for _, w := range cfg.Webhooks {
			ref := w.ClientConfig.Service
			if ref == nil {
				return nil, fmt.Errorf("webhook %s: OLM serves webhooks through a Service only", w.Name)
			}
			svc, err := webhookService(in, ref.Name)
			if err != nil {
				return nil, fmt.Errorf("webhook %s: %w", w.Name, err)
			}
			port := svc.Spec.Ports[0]
			out = append(out, operatorsv1alpha1.WebhookDescription{
				GenerateName:            w.Name,
				Type:                    operatorsv1alpha1.MutatingAdmissionWebhook,
				DeploymentName:          deployment,
				ContainerPort:           port.Port,
				TargetPort:              &intstr.IntOrString{Type: port.TargetPort.Type, IntVal: port.TargetPort.IntVal, StrVal: port.TargetPort.StrVal},
				Rules:                   w.Rules,
				FailurePolicy:           w.FailurePolicy,
				MatchPolicy:             w.MatchPolicy,
				ObjectSelector:          w.ObjectSelector,
				SideEffects:             w.SideEffects,
				TimeoutSeconds:          w.TimeoutSeconds,
				AdmissionReviewVersions: w.AdmissionReviewVersions,
				ReinvocationPolicy:      w.ReinvocationPolicy,
				WebhookPath:             ref.Path,
			})
		}
	}
	return out, nil
}

// serviceKind is the kind of the webhook's Service.
const serviceKind = "Service"

// webhookService is the Service a webhook configuration names.
func webhookService(in *inputs, name string) (*corev1.Service, error) {
	for _, u := range in.others {
		if u.GetKind() != serviceKind || u.GetName() != name {
			continue
		}
		svc := &corev1.Service{}
		if err := fromUnstructured(u, svc); err != nil {
			return nil, err
		}
		if len(svc.Spec.Ports) != 1 {
			return nil, fmt.Errorf("service %s has %d ports, want 1", name, len(svc.Spec.Ports))
		}
		return svc, nil
	}
	return nil, fmt.Errorf("service %s is not in config/manifests", name)
}

// isWebhookService reports whether a webhook configuration names the
// Service: OLM creates its own, so the bundle does not ship it.
func isWebhookService(in *inputs, u *unstructured.Unstructured) bool {
	if u.GetKind() != serviceKind {
		return false
	}
	for _, cfg := range in.mutatingWebhooks {
		webhooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
		for _, w := range webhooks {
			name, _, _ := unstructured.NestedString(w.(map[string]any), "clientConfig", "service", "name")
			if name == u.GetName() {
				return true
			}
		}
	}
	return false
}
