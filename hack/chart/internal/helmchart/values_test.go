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

package helmchart_test

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"testing"

	"github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
)

// everything turns every option on, as the lint does; render it where
// NodeHealthCheck is installed.
const everything = `
webhook: {enabled: true}
admissionPolicies: {enabled: true}
monitoring:
  serviceMonitor: {enabled: true}
  prometheusRule: {enabled: true}
  dashboard: {enabled: true, namespace: cattle-dashboards}
  prometheusServiceAccount: {name: rancher-monitoring-prometheus, namespace: cattle-monitoring-system}
`

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

func decode(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if u == nil {
		t.Fatalf("no object to decode into %T", into)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		t.Fatalf("%s %s does not decode strictly into %T: %v", u.GetKind(), u.GetName(), into, err)
	}
}

func TestLintStrict(t *testing.T) {
	for name, doc := range map[string]string{"defaults": "", "everything": everything,
		"cert-manager": "webhook: {enabled: true, certManager: {enabled: true}}"} {
		t.Run(name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			msgs, err := helmchart.Lint(helmchart.Dir(root(t)), namespace, values(t, doc))
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(msgs).To(gomega.BeEmpty(), "helm lint --strict")
		})
	}
}

func TestLintStrictCRDChart(t *testing.T) {
	g := gomega.NewWithT(t)
	msgs, err := helmchart.Lint(helmchart.CRDDir(root(t)), namespace, nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(msgs).To(gomega.BeEmpty(), "helm lint --strict")
}

func TestValuesSchemaRefusesMistakes(t *testing.T) {
	ch, err := helmchart.Load(root(t))
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		"replicas: 3":                                "replicas",
		"image: {pullPolicy: Sometimes}":             "pullPolicy",
		"leaderElection: {leaseDuration: 15}":        "leaseDuration",
		"extraArgs: [leader-elect]":                  "extraArgs",
		"nodeHealthCheck: {unhealthyConditions: []}": "unhealthyConditions",
	} {
		t.Run(doc, func(t *testing.T) {
			g := gomega.NewWithT(t)
			_, _, err := helmchart.Render(ch, namespace, values(t, doc))
			g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring(want)))
		})
	}
}

func TestValuesReachTheManager(t *testing.T) {
	g := gomega.NewWithT(t)
	objs := render(t, `
replicaCount: 3
image: {registry: registry.example, repository: s3gw-remediation, tag: dev, pullPolicy: Always}
priorityClassName: system-cluster-critical
leaderElection: {leaseDuration: 30s, renewDeadline: 20s, retryPeriod: 4s}
logLevel: debug
extraArgs: [--workload-cache-selector=app.kubernetes.io/name=s3gw]
metrics: {secure: false}
nodeSelector: {kubernetes.io/os: linux}
podDisruptionBudget: {enabled: false}
monitoring: {serviceMonitor: {enabled: true, interval: 15s, labels: {release: kube-prometheus-stack}}}
`)
	var d appsv1.Deployment
	decode(t, find(objs, "Deployment", "s3gw-remediation-controller-manager"), &d)
	g.Expect(*d.Spec.Replicas).To(gomega.Equal(int32(3)))
	g.Expect(d.Spec.Template.Spec.NodeSelector).To(gomega.Equal(map[string]string{"kubernetes.io/os": "linux"}))
	g.Expect(d.Spec.Template.Spec.PriorityClassName).To(gomega.Equal("system-cluster-critical"))
	g.Expect(find(objs, "PriorityClass", "s3gw-remediation-critical")).To(gomega.BeNil(), "another class replaces the chart's")
	c := d.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(gomega.Equal("registry.example/s3gw-remediation:dev"))
	g.Expect(string(c.ImagePullPolicy)).To(gomega.Equal("Always"))
	g.Expect(c.Args).To(gomega.Equal([]string{
		"--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443", "--metrics-secure=false",
		"--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=4s",
		"--zap-log-level=debug", "--workload-cache-selector=app.kubernetes.io/name=s3gw",
	}))
	g.Expect(find(objs, "PodDisruptionBudget", "s3gw-remediation-controller-manager")).To(gomega.BeNil())

	var sm monitoringv1.ServiceMonitor
	decode(t, find(objs, "ServiceMonitor", "s3gw-remediation-controller-manager-metrics-monitor"), &sm)
	g.Expect(sm.Labels).To(gomega.HaveKeyWithValue("release", "kube-prometheus-stack"))
	g.Expect(sm.Spec.Endpoints).To(gomega.HaveLen(1))
	e := sm.Spec.Endpoints[0]
	g.Expect(string(*e.Scheme)).To(gomega.Equal("http"), "plain HTTP without --metrics-secure")
	g.Expect(e.Authorization).To(gomega.BeNil(), "no credentials for the open endpoint")
	g.Expect(e.TLSConfig).To(gomega.BeNil())
	for kind, name := range map[string]string{"ServiceAccount": "s3gw-remediation-metrics-scraper",
		"Secret": "s3gw-remediation-metrics-token", "ClusterRoleBinding": "s3gw-remediation-metrics-scraper"} {
		g.Expect(find(objs, kind, name)).To(gomega.BeNil(), "no scrape credentials for the open endpoint")
	}
	g.Expect(string(e.Interval)).To(gomega.Equal("15s"))
}

// TestImageRegistry: a registry Rancher or a parent chart sets replaces the
// image's, keeping its path, as in Rancher's own charts.
func TestImageRegistry(t *testing.T) {
	for doc, want := range map[string]string{
		"": "quay.io/s3gw-tech/s3gw-remediation:v",
		"global: {cattle: {systemDefaultRegistry: registry.example:5000}}":                            "registry.example:5000/s3gw-tech/s3gw-remediation:v",
		"global: {systemDefaultRegistry: registry.example}":                                           "registry.example/s3gw-tech/s3gw-remediation:v",
		"global: {imageRegistry: mirror.example/, cattle: {systemDefaultRegistry: registry.example}}": "mirror.example/s3gw-tech/s3gw-remediation:v",
		"image: {registry: '', repository: ghcr.io/me/s3gw-remediation, tag: dev}":                    "ghcr.io/me/s3gw-remediation:dev",
	} {
		t.Run(doc, func(t *testing.T) {
			g := gomega.NewWithT(t)
			var d appsv1.Deployment
			decode(t, find(render(t, doc), "Deployment", "s3gw-remediation-controller-manager"), &d)
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(gomega.HavePrefix(want))
		})
	}
}

// TestPriorityClass: by default the manager runs with the chart's own
// PriorityClass, which preempts nothing.
func TestPriorityClass(t *testing.T) {
	g := gomega.NewWithT(t)
	objs := render(t, "")
	var pc schedulingv1.PriorityClass
	decode(t, find(objs, "PriorityClass", "s3gw-remediation-critical"), &pc)
	g.Expect(pc.Value).To(gomega.Equal(int32(1000000000)))
	g.Expect(pc.GlobalDefault).To(gomega.BeFalse())
	g.Expect(pc.PreemptionPolicy).To(gomega.HaveValue(gomega.Equal(corev1.PreemptNever)))
	var d appsv1.Deployment
	decode(t, find(objs, "Deployment", "s3gw-remediation-controller-manager"), &d)
	g.Expect(d.Spec.Template.Spec.PriorityClassName).To(gomega.Equal(pc.Name))

	objs = render(t, "priorityClass: {create: false}")
	g.Expect(find(objs, "PriorityClass", "s3gw-remediation-critical")).To(gomega.BeNil())
	var without appsv1.Deployment
	decode(t, find(objs, "Deployment", "s3gw-remediation-controller-manager"), &without)
	g.Expect(without.Spec.Template.Spec.PriorityClassName).To(gomega.BeEmpty())
}

func TestEverythingRendersValidObjects(t *testing.T) {
	g := gomega.NewWithT(t)
	objs := render(t, everything, helmchart.NodeHealthCheckAPI)

	var sm monitoringv1.ServiceMonitor
	decode(t, find(objs, "ServiceMonitor", "s3gw-remediation-controller-manager-metrics-monitor"), &sm)
	g.Expect(sm.Spec.Endpoints[0].HonorLabels).To(gomega.BeTrue(), "the protection gauges' namespace and pod labels must win")
	// Prometheus scrapes as the chart's ServiceAccount, with its token.
	auth := sm.Spec.Endpoints[0].Authorization
	g.Expect(auth).NotTo(gomega.BeNil())
	g.Expect(auth.Credentials.Name).To(gomega.Equal("s3gw-remediation-metrics-token"))
	token := find(objs, "Secret", auth.Credentials.Name)
	g.Expect(token).NotTo(gomega.BeNil())
	g.Expect(token.GetAnnotations()).To(gomega.HaveKeyWithValue("kubernetes.io/service-account.name", "s3gw-remediation-metrics-scraper"))
	g.Expect(find(objs, "ServiceAccount", "s3gw-remediation-metrics-scraper")).NotTo(gomega.BeNil())
	scraper := find(objs, "ClusterRoleBinding", "s3gw-remediation-metrics-scraper")
	g.Expect(scraper).NotTo(gomega.BeNil())
	g.Expect(scraper.Object["roleRef"]).To(gomega.HaveKeyWithValue("name", "s3gw-remediation-metrics-reader"))
	g.Expect(find(objs, "ClusterRole", "s3gw-remediation-metrics-reader")).NotTo(gomega.BeNil(), "the role it binds")
	g.Expect(sm.Spec.Endpoints[0].TLSConfig.InsecureSkipVerify).To(gomega.HaveValue(gomega.BeTrue()),
		"the manager's own certificate has no CA to verify it with")
	var rule monitoringv1.PrometheusRule
	decode(t, find(objs, "PrometheusRule", "s3gw-remediation-alerts"), &rule)
	g.Expect(rule.Spec.Groups).NotTo(gomega.BeEmpty())
	g.Expect(rule.Spec.Groups[0].Rules[0].Annotations["summary"]).To(gomega.ContainSubstring("{{ $labels.pod }}"),
		"Helm leaves the alert templates alone")

	dashboard := find(objs, "ConfigMap", "s3gw-remediation-dashboard")
	g.Expect(dashboard).NotTo(gomega.BeNil())
	g.Expect(dashboard.GetNamespace()).To(gomega.Equal("cattle-dashboards"))
	g.Expect(dashboard.GetLabels()).To(gomega.HaveKeyWithValue("grafana_dashboard", "1"))

	binding := find(objs, "ClusterRoleBinding", "s3gw-remediation-metrics-reader-prometheus")
	g.Expect(binding).NotTo(gomega.BeNil())
	g.Expect(binding.Object["subjects"]).To(gomega.ConsistOf(gomega.And(
		gomega.HaveKeyWithValue("name", "rancher-monitoring-prometheus"),
		gomega.HaveKeyWithValue("namespace", "cattle-monitoring-system"))))

	nhc := find(objs, "NodeHealthCheck", "s3gw-nodes")
	g.Expect(nhc).NotTo(gomega.BeNil())
	ref, _, _ := unstructured.NestedStringMap(nhc.Object, "spec", "remediationTemplate")
	g.Expect(ref).To(gomega.Equal(map[string]string{
		"apiVersion": "s3gw-remediation.medik8s.io/v1alpha1", "kind": "S3GWRemediationTemplate",
		"name": "s3gw-remediation-default-template", "namespace": namespace,
	}))
}

// TestGeneratedWebhookCertificate: without cert-manager the chart issues a
// serving certificate for the webhook Service, signed by the CA it puts
// into the webhook configuration.
func TestGeneratedWebhookCertificate(t *testing.T) {
	g := gomega.NewWithT(t)
	objs := render(t, "webhook: {enabled: true}")
	secret := find(objs, "Secret", "webhook-server-cert")
	g.Expect(secret).NotTo(gomega.BeNil())
	data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
	g.Expect(data).To(gomega.HaveKey("tls.key"))

	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(decodeBase64(t, data["ca.crt"]))).To(gomega.BeTrue())
	block, _ := pem.Decode(decodeBase64(t, data["tls.crt"]))
	g.Expect(block).NotTo(gomega.BeNil())
	cert, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "s3gw-remediation-webhook-service." + namespace + ".svc"})
	g.Expect(err).NotTo(gomega.HaveOccurred())

	mwc := find(objs, "MutatingWebhookConfiguration", "s3gw-remediation-mutating-webhook-configuration")
	g.Expect(mwc).NotTo(gomega.BeNil())
	hooks, _, _ := unstructured.NestedSlice(mwc.Object, "webhooks")
	g.Expect(hooks).NotTo(gomega.BeEmpty())
	for _, h := range hooks {
		caBundle, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle")
		g.Expect(caBundle).To(gomega.Equal(data["ca.crt"]))
		svc, _, _ := unstructured.NestedStringMap(h.(map[string]any), "clientConfig", "service")
		g.Expect(svc).To(gomega.HaveKeyWithValue("namespace", namespace))
		g.Expect(find(objs, "Service", svc["name"])).NotTo(gomega.BeNil(), "the webhook's Service is rendered")
	}
	var d appsv1.Deployment
	decode(t, find(objs, "Deployment", "s3gw-remediation-controller-manager"), &d)
	g.Expect(d.Spec.Template.Spec.Volumes).To(gomega.ContainElement(gomega.HaveField("Secret.SecretName", "webhook-server-cert")))
}

func decodeBase64(t *testing.T, s string) []byte {
	t.Helper()
	out, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCertManagerWithoutWebhook: cert-manager issues the metrics
// endpoint's certificate even without the webhook, and the manager serves
// it.
func TestCertManagerWithoutWebhook(t *testing.T) {
	g := gomega.NewWithT(t)
	objs := render(t, "certManager: {enabled: true}")
	g.Expect(find(objs, "Issuer", "s3gw-remediation-selfsigned-issuer")).NotTo(gomega.BeNil())
	cert := find(objs, "Certificate", "s3gw-remediation-metrics-certs")
	g.Expect(cert).NotTo(gomega.BeNil())
	g.Expect(cert.Object["spec"]).To(gomega.HaveKeyWithValue("dnsNames", gomega.ContainElement(
		"s3gw-remediation-controller-manager-metrics-service."+namespace+".svc")))
	g.Expect(find(objs, "Certificate", "s3gw-remediation-serving-cert")).To(gomega.BeNil(), "no webhook, no webhook certificate")
	var d appsv1.Deployment
	decode(t, find(objs, "Deployment", "s3gw-remediation-controller-manager"), &d)
	g.Expect(d.Spec.Template.Spec.Volumes).To(gomega.ConsistOf(gomega.HaveField("Secret.SecretName", "metrics-server-cert")))
	g.Expect(d.Spec.Template.Spec.Containers[0].VolumeMounts).To(gomega.ConsistOf(
		gomega.HaveField("MountPath", "/tmp/k8s-metrics-server/serving-certs")))
}
