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

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

const (
	// logDirEnv keeps the control-plane logs and olm.log of the test under
	// that directory, as for the other local-cluster tests.
	logDirEnv = "LOCAL_CLUSTER_LOG_DIR"

	olmNamespace      = "olm"
	operatorGroupName = "s3gw-remediation"

	// aggregationLabel is the label NodeHealthCheck aggregates remediator
	// ClusterRoles by.
	aggregationLabel = "rbac.ext-remediation/aggregate-to-ext-remediation"
	// nhcRoleName and nhcServiceAccount are what the NodeHealthCheck
	// operator creates and runs as (node-healthcheck-operator
	// internal/controller/rbac/aggregation.go: roleName, saName): a
	// ClusterRole aggregating every ClusterRole with aggregationLabel,
	// bound to its ServiceAccount.
	nhcRoleName       = "node-healthcheck-operator-aggregation"
	nhcServiceAccount = "node-healthcheck-controller-manager"
	nhcNamespace      = "node-healthcheck"

	multipleTemplatesAnnotation = "remediation.medik8s.io/multiple-templates-support"
)

// TestInstallsThroughOLM installs the committed bundle/ through OLM's real
// olm operator on the local cluster and checks what OLM made of it. See the
// package documentation for what plays the catalog operator's part.
func TestInstallsThroughOLM(t *testing.T) {
	began := time.Now()
	root, ctx := olmTest(t, 5*time.Minute)

	b, err := ReadBundle(filepath.Join(root, olm.BundleDir, "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	namespace := b.CSV.Annotations["operatorframework.io/suggested-namespace"]
	if namespace == "" {
		t.Fatal("the CSV has no operatorframework.io/suggested-namespace annotation")
	}

	// The cluster, with two simulated nodes for the operator's pod.
	nodes := []string{"node-a", "node-b"}
	c, cl := startCluster(ctx, t, nodes...)
	t.Logf("Cluster with %d nodes ready after %s (%s)", len(nodes), since(began), c.Describe())

	// OLM: its CRDs, then the olm operator.
	createCRDs(ctx, t, cl, olmCRDs())
	create(ctx, t, cl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: olmNamespace}})
	o := startOLM(t, root, c)
	w := waiter{olm: o}

	// The install namespace enforces the restricted Pod Security Standard,
	// as OpenShift does for operator namespaces: the operator's pod must be
	// admitted there.
	create(ctx, t, cl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   namespace,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
	}})
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Name: operatorGroupName, Namespace: namespace}}
	create(ctx, t, cl, og) // no targetNamespaces: AllNamespaces
	w.until(ctx, t, time.Minute, "OLM to resolve the OperatorGroup to all namespaces", func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(og), og); err != nil {
			return false, err
		}
		return slices.Equal(og.Status.Namespaces, []string{metav1.NamespaceAll}), nil
	})

	// What the catalog operator would do with an InstallPlan for the
	// bundle: the CRDs, the CSV, then everything that refers to the CSV.
	installBegan := time.Now()
	createCRDs(ctx, t, cl, monitoringCRDs(t, root)) // the bundle's ServiceMonitor and PrometheusRule need them
	createCRDs(ctx, t, cl, b.CRDsForInstall())
	csv := b.CSVForInstall(namespace)
	create(ctx, t, cl, csv)
	planned, err := b.InstallPlanObjects(csv, namespacedFunc(cl))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range planned {
		create(ctx, t, cl, obj)
	}
	t.Logf("Created the bundle's %d CRDs, its CSV and %d InstallPlan objects in %s", len(b.CRDs), len(planned), namespace)

	// OLM takes it from here.
	var phases []string // phase(reason) at time, as polled
	last := ""
	w.until(ctx, t, 3*time.Minute, "CSV phase Succeeded", func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(csv), csv); err != nil {
			return false, err
		}
		if seen := fmt.Sprintf("%s(%s)", csv.Status.Phase, csv.Status.Reason); csv.Status.Phase != "" && seen != last {
			phases = append(phases, seen+" at "+since(installBegan).String())
			last = seen
		}
		return csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded, nil
	}, func() string {
		return fmt.Sprintf("CSV %s phase %q reason %q message %q; phases seen: %s; requirements: %s; %s",
			csv.Name, csv.Status.Phase, csv.Status.Reason, csv.Status.Message, strings.Join(phases, " -> "), requirementSummary(csv),
			replicaFailures(cl, namespace))
	})
	t.Logf("CSV %s reached phase %s (%s: %s) %s after the install began; phases seen: %s",
		csv.Name, csv.Status.Phase, csv.Status.Reason, csv.Status.Message, since(installBegan), strings.Join(phases, " -> "))

	t.Run("OLM accepted the install strategy's requirements", func(t *testing.T) {
		checkRequirements(t, csv)
	})
	t.Run("OLM created the Deployment and the pod was admitted", func(t *testing.T) {
		checkDeployment(ctx, t, w, cl, b.CSV, csv, nodes)
	})
	t.Run("the InstallPlan objects are still in place", func(t *testing.T) {
		for _, obj := range planned {
			got := obj.DeepCopyObject().(client.Object)
			if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
				t.Errorf("%s: %v", Describe(obj), err)
			}
		}
		t.Logf("%d objects: the ServiceAccount, Roles, RoleBindings, ClusterRoles and ClusterRoleBindings of the install strategy, and the bundle's Service and ClusterRoles", len(planned))
	})
	t.Run("OLM set up the OperatorGroup's APIs and copied the CSV", func(t *testing.T) {
		checkOperatorGroup(ctx, t, w, cl, b.CSV, csv, og)
	})
	t.Run("NodeHealthCheck's aggregated ClusterRole grants the remediation kinds", func(t *testing.T) {
		checkAggregation(ctx, t, w, cl, b, namespace)
	})
	t.Run("OLM registered the template webhook and mounts its certificate", func(t *testing.T) {
		checkWebhook(ctx, t, w, cl, b.CSV, csv)
	})
	t.Run("the samples are accepted", func(t *testing.T) {
		checkSamples(ctx, t, cl, root, namespace)
	})

	if err := o.Stop(15 * time.Second); err != nil {
		t.Error(err)
	} else {
		t.Log("The olm operator exited on SIGTERM with status 0")
	}
	t.Logf("Done in %s", since(began))
}

// olmTest returns the repository root and a context that logs through t
// and ends with the test, or after timeout.
func olmTest(t *testing.T, timeout time.Duration) (string, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return repoRoot(t), logr.NewContext(ctx, testr.New(t))
}

// startCluster starts the local cluster with simulated nodes until the
// test ends, keeping its logs under $LOCAL_CLUSTER_LOG_DIR/<test>.
func startCluster(ctx context.Context, t *testing.T, nodes ...string) (*cluster.Cluster, client.Client) {
	t.Helper()
	opts := cluster.Compressed()
	if dir := os.Getenv(logDirEnv); dir != "" {
		opts.LogDir = filepath.Join(dir, t.Name())
	}
	c, err := cluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	for _, n := range nodes {
		if err := c.AddNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	return c, newClient(t, c)
}

func newClient(t *testing.T, c *cluster.Cluster) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, operatorsv1.AddToScheme, operatorsv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// startOLM runs bin/olm against the cluster until the test ends. Its log
// goes next to the component logs; its last lines are printed if the test
// fails. OLM checks the CSV's minKubeVersion against the server version, so
// kube-apiserver must be a version-stamped build (make stamps it).
func startOLM(t *testing.T, root string, c *cluster.Cluster) *OLM {
	t.Helper()
	v, err := ServerVersion(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if Unstamped(v) {
		t.Fatalf("kube-apiserver reports the unstamped version %s, which fails OLM's minKubeVersion check: "+
			"rebuild it with 'make control-plane', which stamps the release", v.GitVersion)
	}
	return runOLMBinary(t, c, filepath.Join(root, "bin", "olm"), "olm.log")
}

// runOLMBinary runs one of OLM's operators against the cluster until the
// test ends, printing the end of its log if the test fails.
func runOLMBinary(t *testing.T, c *cluster.Cluster, binary, logName string) *OLM {
	t.Helper()
	o, err := StartOLM(OLMOptions{
		Binary:     binary,
		Kubeconfig: c.KubeconfigPath,
		Namespace:  olmNamespace,
		LogPath:    filepath.Join(c.LogDir(), logName),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of %s ---\n%s", o.LogPath, o.LogTail(80))
		}
		// Unless the test already stopped it (or it died, which fails
		// the test).
		if exited, _ := o.Exited(); !exited {
			if err := o.Stop(15 * time.Second); err != nil {
				t.Errorf("%v; last lines of %s:\n%s", err, o.LogPath, o.LogTail(40))
			}
		}
	})
	return o
}

// waiter polls a condition until a deadline, and fails at once with the
// olm operator's log if that exits.
type waiter struct {
	olm *OLM
}

func (w waiter) until(ctx context.Context, t *testing.T, timeout time.Duration, what string, cond func(context.Context) (bool, error), detail ...func() string) {
	t.Helper()
	began := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if exited, err := w.olm.Exited(); exited {
			if err == nil {
				return false, errors.New("the olm operator exited with status 0")
			}
			return false, fmt.Errorf("the olm operator exited: %w", err)
		}
		ok, err := cond(ctx)
		// Not there yet, or the deadline cut a request short.
		if apierrors.IsNotFound(err) || (err != nil && ctx.Err() != nil) {
			return false, nil
		}
		return ok, err
	})
	if err != nil {
		msg := fmt.Sprintf("waiting for %s: %v", what, err)
		if wait.Interrupted(err) {
			msg = fmt.Sprintf("%s not reached within %s", what, timeout)
		}
		for _, d := range detail {
			msg += "\n" + d()
		}
		t.Fatal(msg)
	}
	t.Logf("Waited %s for %s", since(began), what)
}

func create(ctx context.Context, t *testing.T, cl client.Client, obj client.Object) {
	t.Helper()
	if err := cl.Create(ctx, obj); err != nil {
		t.Fatalf("creating %s: %v", Describe(obj), err)
	}
}

func createCRDs(ctx context.Context, t *testing.T, cl client.Client, list []*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	for _, crd := range list {
		create(ctx, t, cl, crd)
	}
	for _, crd := range list {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := cl.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
				return false, err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not Established: %v (conditions %v)", crd.Name, err, crd.Status.Conditions)
		}
	}
}

func namespacedFunc(cl client.Client) func(schema.GroupVersionKind) (bool, error) {
	return func(gvk schema.GroupVersionKind) (bool, error) {
		m, err := cl.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, err
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	}
}

// checkRequirements reads OLM's verdict on the CSV's requirements: every
// owned CRD present, every permission rule of the ServiceAccount satisfied.
func checkRequirements(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) {
	kinds := map[string]int{}
	rules := 0
	for _, r := range csv.Status.RequirementStatus {
		kinds[r.Kind]++
		if r.Status != operatorsv1alpha1.RequirementStatusReasonPresent {
			t.Errorf("requirement %s %s: %s (%s)", r.Kind, r.Name, r.Status, r.Message)
		}
		for _, d := range r.Dependents {
			rules++
			if d.Status != operatorsv1alpha1.DependentStatusReasonSatisfied {
				t.Errorf("requirement %s %s: dependent %s %s: %s", r.Kind, r.Name, d.Kind, d.Message, d.Status)
			}
		}
	}
	owned := len(csv.Spec.CustomResourceDefinitions.Owned)
	if kinds["CustomResourceDefinition"] != owned || kinds["ServiceAccount"] != 1 {
		t.Errorf("requirement statuses %v; want %d CustomResourceDefinitions and 1 ServiceAccount", kinds, owned)
	}
	if csv.Spec.MinKubeVersion != "" {
		if kinds["ClusterServiceVersion"] != 1 {
			t.Errorf("requirement statuses %v; want the CSV's minKubeVersion %s checked", kinds, csv.Spec.MinKubeVersion)
		}
		for _, r := range csv.Status.RequirementStatus {
			if r.Kind == "ClusterServiceVersion" {
				t.Logf("OLM: %s", r.Message)
			}
		}
	}
	t.Logf("OLM requirement status: %v, all Present; %d policy rules of the ServiceAccount Satisfied", kinds, rules)
}

// replicaFailures reports why ReplicaSets in namespace could not create
// pods (Pod Security admission, quota, ...).
func replicaFailures(cl client.Client, namespace string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var list appsv1.ReplicaSetList
	if err := cl.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return "ReplicaSets: " + err.Error()
	}
	failures := []string{}
	for _, rs := range list.Items {
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
				failures = append(failures, fmt.Sprintf("ReplicaSet %s: %s: %s", rs.Name, c.Reason, c.Message))
			}
		}
	}
	return fmt.Sprintf("%d ReplicaSets, failures: %v", len(list.Items), failures)
}

func requirementSummary(csv *operatorsv1alpha1.ClusterServiceVersion) string {
	parts := make([]string, 0, len(csv.Status.RequirementStatus))
	for _, r := range csv.Status.RequirementStatus {
		parts = append(parts, fmt.Sprintf("%s %s=%s", r.Kind, r.Name, r.Status))
	}
	return strings.Join(parts, ", ")
}

// checkDeployment checks the Deployment OLM created from the install
// strategy, and its pod, which kwok reports Running on a simulated node.
func checkDeployment(ctx context.Context, t *testing.T, w waiter, cl client.Client, bundleCSV, csv *operatorsv1alpha1.ClusterServiceVersion, nodes []string) {
	specs := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(specs) != 1 {
		t.Fatalf("install strategy has %d deployments, want 1", len(specs))
	}
	spec := specs[0]
	dep := &appsv1.Deployment{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: csv.Namespace, Name: spec.Name}, dep); err != nil {
		t.Fatal(err)
	}
	if !ownedBy(dep.OwnerReferences, csv) || dep.Labels[OwnerLabel] != csv.Name || dep.Labels[OLMManagedLabel] != "true" {
		t.Errorf("Deployment %s: owners %v, labels %v; want OLM's owner reference and labels for CSV %s", dep.Name, dep.OwnerReferences, dep.Labels, csv.Name)
	}
	for k, v := range spec.Label {
		if dep.Labels[k] != v {
			t.Errorf("Deployment %s: label %s=%q, the install strategy says %q", dep.Name, k, dep.Labels[k], v)
		}
	}
	if !deploymentAvailable(dep) || dep.Status.ReadyReplicas != ptrValue(spec.Spec.Replicas) {
		t.Errorf("Deployment %s: %d/%d ready, conditions %v", dep.Name, dep.Status.ReadyReplicas, ptrValue(spec.Spec.Replicas), dep.Status.Conditions)
	}
	want := bundleCSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Image
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != want || got != bundleCSV.Annotations["containerImage"] {
		t.Errorf("Deployment image %s; the CSV's install strategy has %s and containerImage %s", got, want, bundleCSV.Annotations["containerImage"])
	}
	if env := envValue(dep.Spec.Template.Spec.Containers[0].Env, "OPERATOR_CONDITION_NAME"); env != csv.Name {
		t.Errorf("OPERATOR_CONDITION_NAME=%q, OLM injects %q", env, csv.Name)
	}
	annotations := dep.Spec.Template.Annotations
	if annotations[operatorsv1.OperatorGroupAnnotationKey] != operatorGroupName || annotations[operatorsv1.OperatorGroupTargetsAnnotationKey] != "" {
		t.Errorf("pod template annotations %s=%q %s=%q; want the OperatorGroup %s targeting all namespaces",
			operatorsv1.OperatorGroupAnnotationKey, annotations[operatorsv1.OperatorGroupAnnotationKey],
			operatorsv1.OperatorGroupTargetsAnnotationKey, annotations[operatorsv1.OperatorGroupTargetsAnnotationKey], operatorGroupName)
	}

	var pods corev1.PodList
	if err := cl.List(ctx, &pods, client.InNamespace(csv.Namespace), client.MatchingLabels(spec.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	running := map[string]string{} // node → pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && slices.Contains(nodes, p.Spec.NodeName) && p.Spec.ServiceAccountName == spec.Spec.Template.Spec.ServiceAccountName {
			if other, ok := running[p.Spec.NodeName]; ok {
				t.Errorf("Pods %s and %s both run on %s: the required anti-affinity keeps replicas on distinct nodes", other, p.Name, p.Spec.NodeName)
			}
			running[p.Spec.NodeName] = p.Name
			t.Logf("Pod %s Running on %s as %s (admitted under pod-security enforce=restricted; kwok runs no container)", p.Name, p.Spec.NodeName, p.Spec.ServiceAccountName)
		}
	}
	if len(running) != int(ptrValue(spec.Spec.Replicas)) {
		t.Errorf("Running pods of Deployment %s on distinct nodes: %v, want %d", dep.Name, running, ptrValue(spec.Spec.Replicas))
	}

	cond := &unstructured.Unstructured{}
	cond.SetGroupVersionKind(schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v2", Kind: "OperatorCondition"})
	w.until(ctx, t, 30*time.Second, "the OperatorCondition OLM creates for the CSV", func(ctx context.Context) (bool, error) {
		return true, cl.Get(ctx, client.ObjectKey{Namespace: csv.Namespace, Name: csv.Name}, cond)
	})
}

// checkWebhook checks what OLM makes of the CSV's webhookdefinitions: the
// MutatingWebhookConfiguration with its CA, calling a Service OLM creates
// for the Deployment, and the serving certificate mounted where the
// manager's webhook server reads it by default.
func checkWebhook(ctx context.Context, t *testing.T, w waiter, cl client.Client, bundleCSV, csv *operatorsv1alpha1.ClusterServiceVersion) {
	if len(bundleCSV.Spec.WebhookDefinitions) != 1 {
		t.Fatalf("the bundle declares %d webhooks, want 1", len(bundleCSV.Spec.WebhookDefinitions))
	}
	def := bundleCSV.Spec.WebhookDefinitions[0]
	var hook admissionregistrationv1.MutatingWebhook
	w.until(ctx, t, 30*time.Second, "the MutatingWebhookConfiguration OLM creates for "+def.GenerateName, func(ctx context.Context) (bool, error) {
		var list admissionregistrationv1.MutatingWebhookConfigurationList
		if err := cl.List(ctx, &list, client.MatchingLabels{OwnerLabel: csv.Name}); err != nil {
			return false, err
		}
		for _, cfg := range list.Items {
			for _, h := range cfg.Webhooks {
				if h.Name == def.GenerateName && len(h.ClientConfig.CABundle) > 0 {
					hook = h
					return true, nil
				}
			}
		}
		return false, nil
	})
	svc := hook.ClientConfig.Service
	if svc == nil || svc.Namespace != csv.Namespace || svc.Path == nil || *svc.Path != *def.WebhookPath {
		t.Fatalf("webhook %s calls %+v; want a Service in %s, path %s", hook.Name, svc, csv.Namespace, *def.WebhookPath)
	}
	service := &corev1.Service{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: svc.Name}, service); err != nil {
		t.Fatalf("the webhook's Service: %v", err)
	}
	if len(service.Spec.Ports) != 1 || service.Spec.Ports[0].TargetPort.IntValue() != def.TargetPort.IntValue() {
		t.Errorf("Service %s ports %+v, want target port %d", service.Name, service.Spec.Ports, def.TargetPort.IntValue())
	}
	dep := &appsv1.Deployment{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: csv.Namespace, Name: def.DeploymentName}, dep); err != nil {
		t.Fatal(err)
	}
	mounted := false
	for _, m := range dep.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounted = mounted || m.MountPath == "/tmp/k8s-webhook-server/serving-certs"
	}
	if !mounted {
		t.Errorf("OLM mounts no certificate at the manager's --webhook-cert-dir default; mounts %+v", dep.Spec.Template.Spec.Containers[0].VolumeMounts)
	}
	t.Logf("Webhook %s registered with a CA bundle, served through Service %s/%s:%d -> %d; certificate mounted",
		hook.Name, service.Namespace, service.Name, service.Spec.Ports[0].Port, def.TargetPort.IntValue())
}

// checkOperatorGroup checks what OLM derives from the CSV and its
// AllNamespaces OperatorGroup: the provided-APIs annotation, the API
// ClusterRoles aggregated into the cluster's admin, edit and view roles, and
// a copy of the CSV in the other namespaces.
func checkOperatorGroup(ctx context.Context, t *testing.T, w waiter, cl client.Client, bundleCSV, csv *operatorsv1alpha1.ClusterServiceVersion, og *operatorsv1.OperatorGroup) {
	// OLM's OperatorGroup sync does this apart from the CSV's install, so it
	// may finish after the CSV has Succeeded.
	var missing []string
	w.until(ctx, t, time.Minute, "OLM to publish the CSV's APIs on the OperatorGroup", func(ctx context.Context) (bool, error) {
		missing = missing[:0]
		if err := cl.Get(ctx, client.ObjectKeyFromObject(og), og); err != nil {
			return false, err
		}
		provided := strings.Split(og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey], ",")
		for _, crd := range bundleCSV.Spec.CustomResourceDefinitions.Owned {
			api := fmt.Sprintf("%s.%s.%s", crd.Kind, crd.Version, strings.SplitN(crd.Name, ".", 2)[1])
			if !slices.Contains(provided, api) {
				missing = append(missing, fmt.Sprintf("%s in the OperatorGroup's %s annotation", api, operatorsv1.OperatorGroupProvidedAPIsAnnotationKey))
			}
			for _, verb := range []string{"admin", "edit", "view"} {
				name := fmt.Sprintf("%s-%s-%s", crd.Name, crd.Version, verb)
				role := &rbacv1.ClusterRole{}
				if err := cl.Get(ctx, client.ObjectKey{Name: name}, role); err != nil {
					if !apierrors.IsNotFound(err) {
						return false, err
					}
					missing = append(missing, "ClusterRole "+name)
				} else if role.Labels["rbac.authorization.k8s.io/aggregate-to-"+verb] != "true" {
					missing = append(missing, fmt.Sprintf("ClusterRole %s aggregated into %s (labels %v)", name, verb, role.Labels))
				}
			}
		}
		return len(missing) == 0, nil
	}, func() string { return "missing: " + strings.Join(missing, "; ") })
	t.Logf("OperatorGroup provides %s; OLM made admin, edit and view ClusterRoles for each, aggregated into the cluster's admin, edit and view",
		og.Annotations[operatorsv1.OperatorGroupProvidedAPIsAnnotationKey])

	copied := &operatorsv1alpha1.ClusterServiceVersion{}
	w.until(ctx, t, time.Minute, "OLM to copy the CSV into namespace default", func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceDefault, Name: csv.Name}, copied); err != nil {
			return false, err
		}
		return copied.Labels[CopiedFromLabel] == csv.Namespace, nil
	})
	t.Logf("Copied CSV in %s: phase %s, reason %s", copied.Namespace, copied.Status.Phase, copied.Status.Reason)
}

// checkAggregation plays NodeHealthCheck's side of RBAC aggregation and asks
// the API server whether NHC's ServiceAccount may then work with the
// remediation kinds.
func checkAggregation(ctx context.Context, t *testing.T, w waiter, cl client.Client, b *Bundle, namespace string) {
	var aggregated []string
	for _, obj := range b.Objects {
		if obj.GetKind() == kindClusterRole && obj.GetLabels()[aggregationLabel] == "true" {
			role := &rbacv1.ClusterRole{}
			if err := cl.Get(ctx, client.ObjectKey{Name: obj.GetName()}, role); err != nil {
				t.Errorf("ClusterRole %s: %v", obj.GetName(), err)
			} else if role.Labels[aggregationLabel] != "true" {
				t.Errorf("ClusterRole %s in the cluster has labels %v", role.Name, role.Labels)
			}
			aggregated = append(aggregated, obj.GetName())
		}
	}
	if len(aggregated) != 1 {
		t.Fatalf("want one bundle ClusterRole labelled %s=true, got %v", aggregationLabel, aggregated)
	}

	create(ctx, t, cl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nhcNamespace}})
	create(ctx, t, cl, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: nhcRoleName},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{
			MatchLabels: map[string]string{aggregationLabel: "true"},
		}}},
	})
	create(ctx, t, cl, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: nhcRoleName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kindClusterRole, Name: nhcRoleName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: nhcServiceAccount, Namespace: nhcNamespace}},
	})
	group := strings.SplitN(b.CSV.Spec.CustomResourceDefinitions.Owned[0].Name, ".", 2)[1]
	// What NHC does with them (internal/controller/resources): gets
	// templates and watches them cluster-wide (watch.go), its webhook lists
	// them; lists CRs cluster-wide to find a node's (ListRemediationCRs),
	// creates them, updates them (nhc-timed-out, healthy-delay), deletes
	// them, and watches them.
	checks := make([]authorizationv1.ResourceAttributes, 0, 10)
	for _, verb := range []string{"get", "list", "watch"} {
		checks = append(checks, authorizationv1.ResourceAttributes{Group: group, Resource: "s3gwremediationtemplates", Verb: verb})
	}
	for _, verb := range []string{"get", "list", "watch", "create", "update", "delete"} {
		checks = append(checks, authorizationv1.ResourceAttributes{Group: group, Resource: "s3gwremediations", Verb: verb})
	}
	checks = append(checks, authorizationv1.ResourceAttributes{Group: group, Resource: "s3gwremediations", Verb: "create", Namespace: namespace})
	user := fmt.Sprintf("system:serviceaccount:%s:%s", nhcNamespace, nhcServiceAccount)
	w.until(ctx, t, 30*time.Second, "kube-controller-manager to aggregate the remediator ClusterRole into NHC's", func(ctx context.Context) (bool, error) {
		for _, attrs := range checks {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &attrs}}
			if err := cl.Create(ctx, sar); err != nil {
				return false, err
			}
			if !sar.Status.Allowed {
				return false, nil
			}
		}
		return true, nil
	})
	t.Logf("%s may get/list/watch S3GWRemediationTemplates and get/list/watch/create/update/delete S3GWRemediations cluster-wide through ClusterRole %s aggregated into %s",
		user, aggregated[0], nhcRoleName)
}

// checkSamples creates the sample S3GWRemediationTemplate and a
// NodeHealthCheck (the test CRD fixture) that references it, as config/samples
// has them.
func checkSamples(ctx context.Context, t *testing.T, cl client.Client, root, namespace string) {
	template := readObject(t, filepath.Join(root, "config", "samples", "s3gw-remediation_v1alpha1_s3gwremediationtemplate.yaml"))
	if template.GetNamespace() != namespace {
		t.Errorf("the sample template's namespace is %q, the operator's suggested namespace %q", template.GetNamespace(), namespace)
		template.SetNamespace(namespace)
	}
	create(ctx, t, cl, template)
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(template.GroupVersionKind())
	if err := cl.Get(ctx, client.ObjectKeyFromObject(template), stored); err != nil {
		t.Fatal(err)
	}
	wantSpec, _, _ := unstructured.NestedMap(template.Object, "spec", "template", "spec")
	gotSpec, _, _ := unstructured.NestedMap(stored.Object, "spec", "template", "spec")
	if fmt.Sprint(wantSpec) != fmt.Sprint(gotSpec) {
		t.Errorf("stored template spec %v, sample %v", gotSpec, wantSpec)
	}

	nhcCRD := &apiextensionsv1.CustomResourceDefinition{}
	data, err := os.ReadFile(filepath.Join(root, "test", "crds", "medik8s", "nodehealthchecks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, nhcCRD); err != nil {
		t.Fatal(err)
	}
	createCRDs(ctx, t, cl, []*apiextensionsv1.CustomResourceDefinition{nhcCRD})
	nhc := readObject(t, filepath.Join(root, "config", "samples", "remediation_v1alpha1_nodehealthcheck.yaml"))
	create(ctx, t, cl, nhc)

	ref, _, _ := unstructured.NestedStringMap(nhc.Object, "spec", "remediationTemplate")
	referenced := &unstructured.Unstructured{}
	referenced.SetAPIVersion(ref["apiVersion"])
	referenced.SetKind(ref["kind"])
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ref["namespace"], Name: ref["name"]}, referenced); err != nil {
		t.Errorf("NodeHealthCheck %s references %v, which does not resolve: %v", nhc.GetName(), ref, err)
	}
	// The sample carries the annotation itself: no manager runs here to
	// serve the webhook (failurePolicy Ignore) or run the template controller.
	if referenced.GetAnnotations()[multipleTemplatesAnnotation] != "true" {
		t.Errorf("the sample template lacks %s", multipleTemplatesAnnotation)
	}
	t.Logf("NodeHealthCheck %s created, referencing %s %s/%s (present; %s annotation %q)",
		nhc.GetName(), ref["kind"], ref["namespace"], ref["name"], multipleTemplatesAnnotation, referenced.GetAnnotations()[multipleTemplatesAnnotation])
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

func ownedBy(refs []metav1.OwnerReference, csv *operatorsv1alpha1.ClusterServiceVersion) bool {
	for _, r := range refs {
		if r.Kind == operatorsv1alpha1.ClusterServiceVersionKind && r.Name == csv.Name && r.UID == csv.UID {
			return true
		}
	}
	return false
}

func deploymentAvailable(dep *appsv1.Deployment) bool {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }
