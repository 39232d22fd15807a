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
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/longhornsim"
)

// stuckWindow is how long the baseline is watched staying stuck after the
// replacement pod has hit Multi-Attach. Nothing in the baseline can release
// the volume before the attach-detach controller's 6-minute force detach.
const stuckWindow = 15 * time.Second

// TestBaselineFailoverStaysStuck shows the problem the operator solves:
// after a node failure, with Longhorn's default policy and no remediation,
// the gateway's replacement cannot attach the RWO volume, which stays
// attached to the dead node. Recovering the node clears it.
func TestBaselineFailoverStaysStuck(t *testing.T) {
	e := startEnv(t, longhornsim.Options{})
	ctx := e.ctx

	started := time.Now()
	pod := e.waitForReadyGateway(time.Minute)
	failed := pod.Spec.NodeName
	t.Logf("Gateway %s Ready on %s %s after its Deployment was created", pod.Name, failed, time.Since(started).Round(time.Millisecond))
	e.requireAttachedTo(failed)

	failedAt := time.Now()
	if err := e.cluster.FailNode(ctx, failed); err != nil {
		t.Fatal(err)
	}
	if err := e.cluster.WaitForNode(ctx, failed, time.Minute, cluster.NodeUnreachable); err != nil {
		t.Fatal(err)
	}
	t.Logf("Node %s unreachable-tainted %s after failing (%s)", failed, time.Since(failedAt).Round(time.Millisecond), e.cluster.Describe())

	e.eventually("Longhorn sees the node down", 10*time.Second, func(ctx context.Context) (bool, error) {
		c, err := e.longhornNodeCondition(ctx, failed)
		return c.Status == "False" && c.Reason == longhorn.NodeReasonKubernetesNodeNotReady, err
	})
	e.eventually("volume and replica on the dead node turn unknown", 10*time.Second, func(ctx context.Context) (bool, error) {
		var vol longhorn.Volume
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: e.volume.Name}, &vol); err != nil {
			return false, err
		}
		var replicas longhorn.ReplicaList
		if err := e.c.List(ctx, &replicas, client.InNamespace(longhornsim.Namespace), client.MatchingLabels{longhorn.VolumeLabel: e.volume.Name}); err != nil {
			return false, err
		}
		for _, r := range replicas.Items {
			if want := map[bool]string{true: "unknown", false: "running"}[r.Spec.NodeID == failed]; r.Status.CurrentState != want {
				return false, nil
			}
		}
		return vol.Status.Robustness == "unknown" && vol.Status.State == "attached" && vol.Status.CurrentNodeID == failed, nil
	})

	// Taint-based eviction marks the old pod Terminating (it stays so: its
	// kubelet is dead) and the ReplicaSet starts a replacement elsewhere.
	var replacement corev1.Pod
	e.eventually("old pod evicted and a replacement scheduled", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := e.gatewayPods(ctx)
		evicted := false
		for _, p := range pods {
			if p.Name == pod.Name {
				evicted = !p.DeletionTimestamp.IsZero()
			} else if p.Spec.NodeName != "" {
				replacement = p
			}
		}
		return evicted && replacement.Name != "", err
	})
	t.Logf("Old pod evicted, replacement %s on %s, %s after failing", replacement.Name, replacement.Spec.NodeName, time.Since(failedAt).Round(time.Millisecond))
	e.eventually("Multi-Attach reported for the replacement", time.Minute, func(ctx context.Context) (bool, error) {
		return e.multiAttachReported(ctx, replacement.Name)
	})

	e.consistently("volume held by the dead node, replacement not Ready", stuckWindow, func(ctx context.Context) (bool, error) {
		va, err := e.attachment(ctx, failed)
		if err != nil || va == nil || !va.Status.Attached {
			return false, err
		}
		var p corev1.Pod
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(&replacement), &p); err != nil {
			return false, err
		}
		return !workloads.PodReady(&p) && p.Annotations[cluster.VolumesMountedAnnotation] == "", nil
	})
	t.Logf("Baseline still stuck %s after failing", time.Since(failedAt).Round(time.Millisecond))

	// A returning kubelet finishes the old pod's deletion; the volume then
	// moves to the replacement.
	if err := e.cluster.RecoverNode(ctx, failed); err != nil {
		t.Fatal(err)
	}
	recoveredAt := time.Now()
	moved := e.waitForReadyGateway(time.Minute)
	if moved.Name != replacement.Name {
		t.Errorf("Ready gateway is %s, want the replacement %s", moved.Name, replacement.Name)
	}
	t.Logf("Replacement Ready on %s %s after the node recovered", moved.Spec.NodeName, time.Since(recoveredAt).Round(time.Millisecond))
	e.eventually("old VolumeAttachment removed", 30*time.Second, func(ctx context.Context) (bool, error) {
		va, err := e.attachment(ctx, failed)
		return va == nil, err
	})
	e.requireAttachedTo(moved.Spec.NodeName)

	// A graceful delete on a live node unmounts, detaches and completes.
	scaleGateway(t, e, 0)
	e.eventually("gateway gone and volume detached", time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := e.gatewayPods(ctx)
		if err != nil || len(pods) > 0 {
			return false, err
		}
		va, err := e.attachment(ctx, moved.Spec.NodeName)
		if err != nil || va != nil {
			return false, err
		}
		var vol longhorn.Volume
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: e.volume.Name}, &vol); err != nil {
			return false, err
		}
		var n corev1.Node
		if err := e.c.Get(ctx, client.ObjectKey{Name: moved.Spec.NodeName}, &n); err != nil {
			return false, err
		}
		return vol.Status.State == "detached" && len(n.Status.VolumesInUse) == 0, nil
	})
}

// TestDeleteDeploymentPodPolicyReleasesVolume shows Longhorn's own
// node-down-pod-deletion-policy=delete-deployment-pod: after eviction it
// deletes the dead node's VolumeAttachment, force-deletes the pod once its
// grace period is over, and the replacement attaches elsewhere.
func TestDeleteDeploymentPodPolicyReleasesVolume(t *testing.T) {
	e := startEnv(t, longhornsim.Options{NodeDownPodDeletionPolicy: longhornsim.PolicyDeleteDeploymentPod})
	ctx := e.ctx

	pod := e.waitForReadyGateway(time.Minute)
	failed := pod.Spec.NodeName
	e.requireAttachedTo(failed)

	failedAt := time.Now()
	if err := e.cluster.FailNode(ctx, failed); err != nil {
		t.Fatal(err)
	}
	e.eventually("Longhorn releases the dead node's attachment", 2*time.Minute, func(ctx context.Context) (bool, error) {
		va, err := e.attachment(ctx, failed)
		return va == nil, err
	})
	t.Logf("Dead node's VolumeAttachment deleted %s after failing", time.Since(failedAt).Round(time.Millisecond))
	e.eventually("old pod force-deleted", 2*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := e.gatewayPods(ctx)
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == pod.Name }), err
	})
	t.Logf("Old pod force-deleted %s after failing", time.Since(failedAt).Round(time.Millisecond))

	moved := e.waitForReadyGateway(3 * time.Minute)
	t.Logf("Replacement Ready on %s %s after failing (%s; %s)", moved.Spec.NodeName,
		time.Since(failedAt).Round(time.Millisecond), e.cluster.Describe(), e.sim.Describe())
	if moved.Spec.NodeName == failed {
		t.Fatalf("replacement runs on the failed node %s", failed)
	}
	e.requireAttachedTo(moved.Spec.NodeName)
}

func scaleGateway(t *testing.T, e *env, replicas int32) {
	t.Helper()
	var dep appsv1.Deployment
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: namespace, Name: release + "-s3gw"}, &dep); err != nil {
		t.Fatal(err)
	}
	base := dep.DeepCopy()
	dep.Spec.Replicas = ptr.To(replicas)
	if err := e.c.Patch(e.ctx, &dep, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}
