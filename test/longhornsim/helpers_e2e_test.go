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

package longhornsim_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/longhornsim"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{LogTimestamp: true}))
	os.Exit(m.Run())
}

// Gateway labels of the s3gw chart (s3gw.selectorLabels).
var gatewayLabels = map[string]string{
	"app.kubernetes.io/name":      "s3gw",
	"app.kubernetes.io/instance":  "demo",
	"app.kubernetes.io/component": "gateway",
}

// logDirEnv keeps the control-plane logs of each test under that directory.
const logDirEnv = "LOCAL_CLUSTER_LOG_DIR"

const (
	release   = "demo"
	namespace = "s3gw"
	pvcName   = release + "-s3gw-pvc"
)

// env is one compressed cluster with the simulated Longhorn and an s3gw
// gateway on a replicated Longhorn volume.
type env struct {
	t       *testing.T
	ctx     context.Context
	cluster *cluster.Cluster
	sim     *longhornsim.Simulator
	c       client.Client
	nodes   []string
	volume  *longhornsim.ProvisionedVolume
}

func startEnv(t *testing.T, opts longhornsim.Options) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	t.Cleanup(cancel)
	ctx = ctrl.LoggerInto(ctx, ctrl.Log)

	clusterOpts := cluster.Compressed()
	if dir := os.Getenv(logDirEnv); dir != "" {
		clusterOpts.LogDir = filepath.Join(dir, t.Name())
	}
	c, err := cluster.Start(ctx, clusterOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	sim, err := longhornsim.Start(ctx, c.RESTConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sim.Stop(); err != nil {
			t.Error(err)
		}
	})
	e := &env{t: t, ctx: ctx, cluster: c, sim: sim, c: sim.Client(), nodes: []string{"node-a", "node-b", "node-c"}}
	for _, n := range e.nodes {
		if err := c.AddNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CreateNamespace(ctx, namespace); err != nil {
		t.Fatal(err)
	}
	e.volume, err = sim.CreateVolume(ctx, namespace, pvcName, resource.MustParse("10Gi"), corev1.ReadWriteOnce, e.nodes)
	if err != nil {
		t.Fatal(err)
	}
	e.deployGateway()
	t.Logf("Environment: %s; %s", c.Describe(), sim.Describe())
	return e
}

// deployGateway creates the s3gw chart's gateway Deployment: one replica,
// Recreate, no probes or tolerations, the RWO claim at /data.
func (e *env) deployGateway() {
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: release + "-s3gw", Labels: map[string]string{"app.kubernetes.io/name": "s3gw"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: gatewayLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: gatewayLabels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: release, Image: "quay.io/s3gw/s3gw:latest",
						Ports:        []corev1.ContainerPort{{Name: "s3", ContainerPort: 7480}},
						VolumeMounts: []corev1.VolumeMount{{Name: "s3gw-lh-store", MountPath: "/data"}},
					}},
					Volumes: []corev1.Volume{{
						Name:         "s3gw-lh-store",
						VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvcName}},
					}},
				},
			},
		},
	}
	if err := e.c.Create(e.ctx, dep); err != nil {
		e.t.Fatal(err)
	}
}

// eventually polls cond until it holds, failing the test after timeout.
func (e *env) eventually(what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	e.t.Helper()
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, timeout, true, cond); err != nil {
		e.t.Fatalf("%s: not within %s: %v", what, timeout, err)
	}
}

// consistently polls cond for the whole window, failing the test the first
// time it does not hold.
func (e *env) consistently(what string, window time.Duration, cond func(ctx context.Context) (bool, error)) {
	e.t.Helper()
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		ok, err := cond(e.ctx)
		if err != nil || !ok {
			e.t.Fatalf("%s: stopped holding (err %v)", what, err)
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatal(e.ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// gatewayPods lists the gateway's pods.
func (e *env) gatewayPods(ctx context.Context) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := e.c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels(gatewayLabels)); err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// waitForReadyGateway waits for a Ready, not terminating gateway pod.
func (e *env) waitForReadyGateway(timeout time.Duration) corev1.Pod {
	e.t.Helper()
	var ready corev1.Pod
	e.eventually("a Ready gateway pod", timeout, func(ctx context.Context) (bool, error) {
		pods, err := e.gatewayPods(ctx)
		for _, p := range pods {
			if p.DeletionTimestamp.IsZero() && p.Status.Phase == corev1.PodRunning && workloads.PodReady(&p) {
				ready = p
				return true, nil
			}
		}
		return false, err
	})
	return ready
}

// attachment returns the storage.k8s.io VolumeAttachment of the volume on
// node, or nil.
func (e *env) attachment(ctx context.Context, node string) (*storagev1.VolumeAttachment, error) {
	va := &storagev1.VolumeAttachment{}
	err := e.c.Get(ctx, client.ObjectKey{Name: attachrules.AttachmentName(e.volume.Name, node)}, va)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return va, err
}

// requireAttachedTo checks the whole attachment picture of a running
// gateway on node, on both the Kubernetes and the Longhorn side.
func (e *env) requireAttachedTo(node string) {
	e.t.Helper()
	ctx := e.ctx
	va, err := e.attachment(ctx, node)
	if err != nil || va == nil {
		e.t.Fatalf("no VolumeAttachment for %s on %s: %v", e.volume.Name, node, err)
	}
	if !va.Status.Attached || !slices.Contains(va.Finalizers, longhornsim.AttacherFinalizer) {
		e.t.Errorf("VolumeAttachment %s: attached=%v finalizers=%v", va.Name, va.Status.Attached, va.Finalizers)
	}

	var lhva longhorn.VolumeAttachment
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: e.volume.Name}, &lhva); err != nil {
		e.t.Fatal(err)
	}
	ticket := lhva.Spec.AttachmentTickets[va.Name]
	if ticket == nil || ticket.Type != longhorn.TicketTypeCSIAttacher || ticket.NodeID != node {
		e.t.Errorf("Longhorn ticket %s = %+v, want a csi-attacher ticket for %s", va.Name, ticket, node)
	}
	if st := lhva.Status.AttachmentTicketStatuses[va.Name]; st == nil || !st.Satisfied {
		e.t.Errorf("Longhorn ticket %s not satisfied: %+v", va.Name, st)
	}
	if len(lhva.Spec.AttachmentTickets) != 1 {
		e.t.Errorf("Longhorn VolumeAttachment has tickets %v, want exactly one", keys(lhva.Spec.AttachmentTickets))
	}

	var vol longhorn.Volume
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: e.volume.Name}, &vol); err != nil {
		e.t.Fatal(err)
	}
	if vol.Spec.NodeID != node || vol.Status.CurrentNodeID != node || vol.Status.State != "attached" || vol.Status.Robustness != "healthy" {
		e.t.Errorf("Longhorn Volume = spec.nodeID %q status %+v, want healthy and attached to %s", vol.Spec.NodeID, vol.Status, node)
	}

	var n corev1.Node
	if err := e.c.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
		e.t.Fatal(err)
	}
	unique := longhorn.UniqueVolumeName(e.volume.Name)
	if !slices.Contains(n.Status.VolumesInUse, unique) {
		e.t.Errorf("Node %s volumesInUse = %v, want %s", node, n.Status.VolumesInUse, unique)
	}
	if !slices.ContainsFunc(n.Status.VolumesAttached, func(a corev1.AttachedVolume) bool { return a.Name == unique }) {
		e.t.Errorf("Node %s volumesAttached = %v, want %s", node, n.Status.VolumesAttached, unique)
	}
}

// multiAttachReported finds the attach-detach controller's event saying
// that a pod's RWO volume is still attached to another node. Kubernetes
// before 1.34 worded it "Multi-Attach error ..."; 1.37 says "Waiting for
// detach ...". The reason has stayed FailedAttachVolume.
func (e *env) multiAttachReported(ctx context.Context, pod string) (bool, error) {
	var events corev1.EventList
	if err := e.c.List(ctx, &events, client.InNamespace(namespace)); err != nil {
		return false, err
	}
	for _, ev := range events.Items {
		if ev.InvolvedObject.Name == pod && ev.Reason == "FailedAttachVolume" &&
			(strings.Contains(ev.Message, "Multi-Attach error") || strings.Contains(ev.Message, "Waiting for detach")) {
			return true, nil
		}
	}
	return false, nil
}

func (e *env) longhornNodeCondition(ctx context.Context, node string) (longhorn.Condition, error) {
	var n longhorn.Node
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: node}, &n); err != nil {
		return longhorn.Condition{}, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == longhorn.NodeConditionReady {
			return c, nil
		}
	}
	return longhorn.Condition{}, fmt.Errorf("Longhorn Node %s has no Ready condition", node)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
