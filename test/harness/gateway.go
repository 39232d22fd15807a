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
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/longhornsim"
)

// ZoneLabel is the topology label the node-lifecycle controller groups
// nodes by: it rate-limits evictions (one node per 10 s) and judges
// disruption per zone, so independent failures belong in separate zones.
const ZoneLabel = corev1.LabelTopologyZone

// s3gwName is the chart's name label and container name.
const s3gwName = "s3gw"

// readyTimeout bounds how long a gateway may take to start: at 1 000
// nodes on a shared 2-core machine, 16 gateways deployed at once took more
// than 2 minutes.
const readyTimeout = 5 * time.Minute

// AddNodes registers simulated nodes with the given labels (a zone, a
// NodeHealthCheck pool) and waits until each is Ready.
func (e *Env) AddNodes(ctx context.Context, nodeLabels map[string]string, names ...string) error {
	for _, name := range names {
		if err := e.Cluster.AddNodeWithLabels(ctx, name, nodeLabels); err != nil {
			return err
		}
		if err := e.powerOn(name); err != nil {
			return err
		}
	}
	return nil
}

// GatewaySpec says where an s3gw gateway runs and where its data lives.
type GatewaySpec struct {
	// Namespace and Release name it as `helm install <release> -n <namespace>`.
	Namespace, Release string
	// Node is where it starts (preferred scheduling, checked).
	Node string
	// Failover are the other nodes it may move to; scheduling is limited to
	// Node and these.
	Failover []string
	// ReplicaNodes hold the Longhorn volume's replicas.
	ReplicaNodes []string
	// NodeFailureToleration, if set, gives the pod not-ready and
	// unreachable NoExecute tolerations with these seconds, so that taint
	// eviction deletes it that long after its node turned NotReady instead
	// of the cluster's default (300 s).
	NodeFailureToleration *int64
	// ImagePullTime and ColdNodes simulate nodes without the gateway's
	// images: on ColdNodes its pods start ImagePullTime after their volumes
	// are mounted, as after pulling the images there
	// (cluster.ImagePullTimeAnnotation). Zero: every node holds them.
	ImagePullTime time.Duration
	ColdNodes     []string
}

// Gateway is a deployed s3gw gateway.
type Gateway struct {
	Namespace, Release string
	// Deployment and Claim are the chart's names: <release>-s3gw and
	// <release>-s3gw-pvc.
	Deployment, Claim string
	// Labels are the gateway pods' labels (s3gw.selectorLabels).
	Labels map[string]string
	// Volume is the Longhorn volume behind the claim.
	Volume *longhornsim.ProvisionedVolume
}

// GatewayLabels are the s3gw chart's gateway selector labels.
func GatewayLabels(release string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      s3gwName,
		"app.kubernetes.io/instance":  release,
		"app.kubernetes.io/component": "gateway",
	}
}

// DeployGateway creates the chart's gateway Deployment (one replica,
// Recreate, no probes or tolerations, the RWO claim at /data) and its
// Longhorn volume, and waits until the gateway is Ready on spec.Node.
func (e *Env) DeployGateway(ctx context.Context, spec GatewaySpec) (*Gateway, error) {
	if err := e.ensureNamespace(ctx, spec.Namespace); err != nil {
		return nil, err
	}
	g := &Gateway{
		Namespace: spec.Namespace, Release: spec.Release,
		Deployment: spec.Release + "-s3gw", Claim: spec.Release + "-s3gw-pvc",
		Labels: GatewayLabels(spec.Release),
	}
	var err error
	g.Volume, err = e.Sim.CreateVolume(ctx, spec.Namespace, g.Claim, resource.MustParse("10Gi"), corev1.ReadWriteOnce, spec.ReplicaNodes)
	if err != nil {
		return nil, err
	}
	if err := e.Client.Create(ctx, gatewayDeployment(g, spec)); err != nil {
		return nil, fmt.Errorf("creating Deployment %s/%s: %w", g.Namespace, g.Deployment, err)
	}
	pod, err := e.WaitForReadyGateway(ctx, g, readyTimeout)
	if err != nil {
		return nil, err
	}
	if pod.Spec.NodeName != spec.Node {
		return nil, fmt.Errorf("gateway %s started on %s, want %s", pod.Name, pod.Spec.NodeName, spec.Node)
	}
	return g, nil
}

func gatewayDeployment(g *Gateway, spec GatewaySpec) *appsv1.Deployment {
	podLabels := maps.Clone(g.Labels)
	allowed := append([]string{spec.Node}, spec.Failover...)
	var podAnnotations map[string]string
	if spec.ImagePullTime > 0 {
		podAnnotations = map[string]string{cluster.ImagePullTimeAnnotation: spec.ImagePullTime.String(),
			cluster.ColdNodesAnnotation: strings.Join(spec.ColdNodes, ",")}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: g.Namespace, Name: g.Deployment,
			Labels: map[string]string{"app.kubernetes.io/name": s3gwName, "app.kubernetes.io/instance": g.Release},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: g.Labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: podAnnotations},
				Spec: corev1.PodSpec{
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchExpressions: []corev1.NodeSelectorRequirement{{
								Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: allowed,
							}},
						}}},
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
							Weight: 100,
							Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
								Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{spec.Node},
							}}},
						}},
					}},
					Containers: []corev1.Container{{
						Name: s3gwName, Image: "quay.io/s3gw/s3gw:latest",
						Args:         []string{"--rgw-backend-store", "sfs", "--rgw_data", "/data"},
						Ports:        []corev1.ContainerPort{{Name: "s3", ContainerPort: 7480}},
						VolumeMounts: []corev1.VolumeMount{{Name: "s3gw-lh-store", MountPath: "/data"}},
					}},
					Volumes: []corev1.Volume{{
						Name:         "s3gw-lh-store",
						VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: g.Claim}},
					}},
					Tolerations: nodeFailureTolerations(spec.NodeFailureToleration),
				},
			},
		},
	}
}

// nodeFailureTolerations are the tolerations the DefaultTolerationSeconds
// admission plugin would add, with other seconds; nil keeps its defaults.
func nodeFailureTolerations(seconds *int64) []corev1.Toleration {
	if seconds == nil {
		return nil
	}
	var out []corev1.Toleration
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		out = append(out, corev1.Toleration{
			Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(*seconds),
		})
	}
	return out
}

// GatewayPods lists the gateway's pods.
func (e *Env) GatewayPods(ctx context.Context, g *Gateway) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := e.Client.List(ctx, &pods, client.InNamespace(g.Namespace), client.MatchingLabels(g.Labels)); err != nil {
		return nil, fmt.Errorf("listing pods of gateway %s/%s: %w", g.Namespace, g.Release, err)
	}
	return pods.Items, nil
}

// WaitForReadyGateway waits for a Ready, not terminating gateway pod.
func (e *Env) WaitForReadyGateway(ctx context.Context, g *Gateway, timeout time.Duration) (*corev1.Pod, error) {
	var ready *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := e.GatewayPods(ctx, g)
		for i := range pods {
			if pods[i].DeletionTimestamp.IsZero() && PodReady(&pods[i]) {
				ready = &pods[i]
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for a Ready pod of gateway %s/%s: %w", g.Namespace, g.Release, err)
	}
	return ready, nil
}

// PodReady reports whether the pod runs and its Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
