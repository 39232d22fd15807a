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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/postrenderer"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/manifests"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

const (
	placementDir = "contrib/s3gw-placement"
	// dataLabel marks the nodes that hold s3gw's replicas (placement.yaml);
	// Longhorn would carry the node tag s3gw-data on the same nodes.
	dataLabel = "s3gw.tech/data"
)

// placement follows docs/install-k3s.md, "Making s3gw protected", on the
// local cluster. Before: s3gw's chart as its defaults install it, with a
// replica of its volume on every node (Longhorn's default StorageClass on a
// small cluster), so one is on s3gw's node. After: the guide's StorageClass
// (replicas only on the s3gw-data nodes) and its post-renderer (s3gw off
// those nodes), for a new s3gw and, with move-claim.sh and the `helm
// upgrade` it prints, for the one installed before. The simulated Longhorn
// does not read StorageClasses: the test puts the replicas where Longhorn
// would.
func placement(ctx context.Context, t *testing.T, env *harness.Env, root string) {
	t.Helper()
	g := gomega.NewWithT(t)
	g.Expect(kubectlApply(ctx, env.Cluster, filepath.Join(root, placementDir, "storageclass.yaml"))).To(gomega.Succeed())
	zone := map[string]string{harness.ZoneLabel: "zone-placement"}
	g.Expect(env.AddNodes(ctx, map[string]string{harness.ZoneLabel: "zone-placement", dataLabel: "true"}, "data-1", "data-2")).To(gomega.Succeed())
	g.Expect(env.AddNodes(ctx, zone, "gw-1", "gw-2")).To(gomega.Succeed())
	standin, err := loader.LoadDir(filepath.Join("testdata", "s3gw-standin"))
	g.Expect(err).NotTo(gomega.HaveOccurred())

	var nodes corev1.NodeList
	g.Expect(env.Client.List(ctx, &nodes)).To(gomega.Succeed())
	everyNode := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		everyNode = append(everyNode, n.Name)
	}
	before := installS3GW(ctx, t, env, standin, "s3gw-before", everyNode, nil, nil)
	report := expectReport(ctx, t, env, before, s3gwv1alpha1.ReasonNoFencingEvidence)
	t.Logf("before: %s on %s: %s: %s", before.Name, before.Spec.NodeName, report.Reason, report.Message)

	// Helm 4 runs the post-renderer as a plugin (Helm 3 runs post-render.sh).
	kubectl, err := env.Cluster.Kubectl(ctx)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	t.Setenv("KUBECTL", kubectl.Path)
	settings := cli.New()
	settings.PluginsDirectory = t.TempDir()
	g.Expect(os.CopyFS(filepath.Join(settings.PluginsDirectory, "s3gw-placement"), os.DirFS(filepath.Join(root, placementDir)))).To(gomega.Succeed())
	post, err := postrenderer.NewPostRendererPlugin(settings, "s3gw-placement")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	expectScriptPlacesOnlyTheGateway(t, root, kubectl.Path, standin)

	classValues := map[string]any{"storageClass": map[string]any{"create": false, "name": placementClass}}
	after := installS3GW(ctx, t, env, standin, "s3gw", []string{"data-1", "data-2"}, classValues, post)
	g.Expect(after.Spec.NodeName).NotTo(gomega.HavePrefix("data-"), "the gateway keeps off the s3gw-data nodes")
	report = expectReport(ctx, t, env, after, s3gwv1alpha1.ReasonPodProtected)
	t.Logf("after: %s on %s: %s: %s", after.Name, after.Spec.NodeName, report.Reason, report.Message)

	var ui appsv1.Deployment
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "s3gw", Name: "s3gw-s3gw-ui"}, &ui)).To(gomega.Succeed())
	g.Expect(ui.Spec.Template.Spec.Affinity).To(gomega.BeNil(), "the post-renderer leaves the UI alone")

	moved := moveClaim(ctx, t, env, root, standin, "s3gw-before", classValues, post)
	report = expectReport(ctx, t, env, moved, s3gwv1alpha1.ReasonPodProtected)
	t.Logf("moved: %s on %s: %s: %s", moved.Name, moved.Spec.NodeName, report.Reason, report.Message)
}

// placementClass is storageclass.yaml's StorageClass.
const placementClass = "longhorn-s3gw"

// moveClaim moves the s3gw installed in ns onto storageclass.yaml's class
// as docs/install-k3s.md says: move-claim.sh (Longhorn provisions the
// clone on the data nodes), then the `helm upgrade` it prints, with the
// post-renderer, then another upgrade, as the next release of s3gw's chart
// brings. The claim keeps its name and its new volume through both.
func moveClaim(ctx context.Context, t *testing.T, env *harness.Env, root string, standin *chartv2.Chart, ns string,
	classValues map[string]any, post postrenderer.PostRenderer) *corev1.Pod {
	t.Helper()
	g := gomega.NewWithT(t)
	const claim = "s3gw-s3gw-pvc"
	var old corev1.PersistentVolumeClaim
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, &old)).To(gomega.Succeed())

	provisioned := make(chan error, 1)
	go func() {
		_, err := env.Sim.ProvisionClaim(ctx, ns, claim+"-"+placementClass, []string{"data-1", "data-2"})
		provisioned <- err
	}()
	cmd := exec.CommandContext(ctx, filepath.Join(root, placementDir, "move-claim.sh"), ns, "s3gw")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Cluster.KubeconfigPath)
	out, err := cmd.CombinedOutput()
	t.Logf("move-claim.sh %s s3gw:\n%s", ns, out)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(<-provisioned).To(gomega.Succeed())

	var moved corev1.PersistentVolumeClaim
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, &moved)).To(gomega.Succeed())
	g.Expect(moved.Spec.StorageClassName).To(gomega.HaveValue(gomega.Equal(placementClass)))
	g.Expect(moved.Spec.VolumeName).NotTo(gomega.Equal(old.Spec.VolumeName))
	var oldPV corev1.PersistentVolume
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: old.Spec.VolumeName}, &oldPV)).To(gomega.Succeed(), "the old volume is kept")

	helm, err := NewHelm(env.Cluster.KubeconfigPath, ns)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for i, values := range []map[string]any{classValues, withValue(classValues, "ui", map[string]any{"enabled": false})} {
		g.Expect(helm.Upgrade(ctx, "s3gw", standin, values, post)).To(gomega.Succeed(), "helm upgrade %d after the move", i+1)
		var now corev1.PersistentVolumeClaim
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, &now)).To(gomega.Succeed())
		g.Expect(now.UID).To(gomega.Equal(moved.UID), "helm upgrade %d keeps the claim", i+1)
		g.Expect(now.Spec.VolumeName).To(gomega.Equal(moved.Spec.VolumeName))
		g.Expect(now.Status.Phase).To(gomega.Equal(corev1.ClaimBound))
	}
	gw := &harness.Gateway{Namespace: ns, Release: "s3gw", Deployment: "s3gw-s3gw", Claim: claim, Labels: harness.GatewayLabels("s3gw")}
	pod, err := env.WaitForReadyGateway(ctx, gw, 2*time.Minute)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(pod.Spec.NodeName).NotTo(gomega.HavePrefix("data-"), "the upgrade's post-renderer keeps the gateway off the s3gw-data nodes")
	return pod
}

func withValue(values map[string]any, key string, value any) map[string]any {
	out := map[string]any{key: value}
	for k, v := range values {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// installS3GW installs the stand-in with values as release s3gw in
// namespace ns, has the simulated Longhorn provision its claim with the
// replicas on replicaNodes, and returns its Ready gateway pod.
func installS3GW(ctx context.Context, t *testing.T, env *harness.Env, standin *chartv2.Chart, ns string, replicaNodes []string,
	values map[string]any, post postrenderer.PostRenderer) *corev1.Pod {
	t.Helper()
	g := gomega.NewWithT(t)
	helm, err := NewHelm(env.Cluster.KubeconfigPath, ns)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(env.Cluster.CreateNamespace(ctx, ns)).To(gomega.Succeed())
	provisioned := make(chan error, 1)
	go func() {
		_, err := env.Sim.ProvisionClaim(ctx, ns, "s3gw-s3gw-pvc", replicaNodes)
		provisioned <- err
	}()
	g.Expect(helm.Install(ctx, "s3gw", standin, values, post)).To(gomega.Succeed())
	g.Expect(<-provisioned).To(gomega.Succeed())
	gw := &harness.Gateway{Namespace: ns, Release: "s3gw", Deployment: "s3gw-s3gw", Claim: "s3gw-s3gw-pvc",
		Labels: harness.GatewayLabels("s3gw")}
	pod, err := env.WaitForReadyGateway(ctx, gw, 2*time.Minute)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return pod
}

// expectReport waits until the default template reports pod with reason.
func expectReport(ctx context.Context, t *testing.T, env *harness.Env, pod *corev1.Pod, reason string) *s3gwv1alpha1.PodProtection {
	t.Helper()
	var report *s3gwv1alpha1.PodProtection
	gomega.NewWithT(t).Eventually(func() (string, error) {
		var err error
		if report, err = templateReport(ctx, env, pod.Namespace, pod.Name); err != nil || report == nil {
			return "", err
		}
		return report.Reason, nil
	}).WithContext(ctx).WithTimeout(time.Minute).Should(gomega.Equal(reason), "the default template's report of %s/%s", pod.Namespace, pod.Name)
	return report
}

// expectScriptPlacesOnlyTheGateway runs post-render.sh, Helm 3's way, on
// the stand-in's manifests.
func expectScriptPlacesOnlyTheGateway(t *testing.T, root, kubectl string, standin *chartv2.Chart) {
	t.Helper()
	g := gomega.NewWithT(t)
	objs, _, err := helmchart.Render(standin, "s3gw", map[string]any{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var in bytes.Buffer
	for _, u := range objs {
		data, err := u.MarshalJSON()
		g.Expect(err).NotTo(gomega.HaveOccurred())
		in.WriteString("---\n")
		in.Write(data)
		in.WriteString("\n")
	}
	cmd := exec.Command(filepath.Join(root, placementDir, "post-render.sh"))
	cmd.Stdin, cmd.Env = &in, append(os.Environ(), "KUBECTL="+kubectl)
	out, err := cmd.Output()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	rendered, err := manifests.Parse(out)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(rendered).To(gomega.HaveLen(len(objs)), "the post-renderer keeps every object")
	for _, u := range rendered {
		terms, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "affinity", "nodeAffinity",
			"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		if strings.HasSuffix(u.GetName(), "-s3gw") {
			g.Expect(fmt.Sprint(terms)).To(gomega.ContainSubstring(dataLabel), "the gateway %s is kept off the data nodes", u.GetName())
		} else {
			g.Expect(terms).To(gomega.BeEmpty(), "%s %s is left alone", u.GetKind(), u.GetName())
		}
	}
}
