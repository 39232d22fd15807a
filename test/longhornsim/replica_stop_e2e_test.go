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
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
	"github.com/s3gw-tech/s3gw-remediation/test/longhornsim"
)

// TestTicketRemovalFirstStopsReplicas walks the two-step release of
// docs/design/replica-stop-confirmation.md through the simulator, with a
// second replica node lost during it:
//
//   - every node's InstanceManager runs and lists its replica of the
//     attached volume;
//   - the gateway's node fails: once Longhorn counts it down its
//     InstanceManager turns unknown and keeps its list;
//   - a second replica node is lost and, before Kubernetes notices, the
//     dead node's csi-attacher ticket is removed while its VolumeAttachment
//     stays attached: the live node's replica stops and leaves its list,
//     the lost node's InstanceManager stays stale and the volume waits in
//     "detaching";
//   - once Longhorn counts the lost node down its InstanceManager is
//     unknown, its replica recorded stopped, and the volume detached, still
//     held by the VolumeAttachment;
//   - the Kubernetes release then moves the gateway: the later unpublish of
//     the removed ticket is a no-op and the replacement attaches.
func TestTicketRemovalFirstStopsReplicas(t *testing.T) {
	e := startEnv(t, longhornsim.Options{})
	ctx := e.ctx

	pod := e.waitForReadyGateway(time.Minute)
	failed := pod.Spec.NodeName
	e.requireAttachedTo(failed)
	replicaOn := e.replicasByNode()
	var lost, live string
	for _, n := range e.nodes {
		switch {
		case n == failed:
		case lost == "":
			lost = n
		default:
			live = n
		}
	}
	t.Logf("Gateway on %s; %s will be lost during the release, %s stays up", failed, lost, live)

	e.eventually("every InstanceManager running and listing its node's replica", 10*time.Second, func(ctx context.Context) (bool, error) {
		for _, n := range e.nodes {
			if ok, err := e.instanceManagerIs(ctx, n, longhorn.InstanceManagerRunning, replicaOn[n]); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	})

	if err := e.cluster.FailNode(ctx, failed); err != nil {
		t.Fatal(err)
	}
	e.eventually("the failed node's InstanceManager unknown, its list kept", 30*time.Second, func(ctx context.Context) (bool, error) {
		return e.instanceManagerIs(ctx, failed, longhorn.InstanceManagerUnknown, replicaOn[failed])
	})

	// Kubernetes notices the lost node only after its grace period (10 s),
	// which leaves time to act before Longhorn counts it down.
	if err := e.cluster.FailNode(ctx, lost); err != nil {
		t.Fatal(err)
	}
	ticket := attachrules.AttachmentName(e.volume.Name, failed)
	e.removeTicket(ticket)
	e.eventually("the live node's replica stopped and the volume waiting for the lost one", 5*time.Second, func(ctx context.Context) (bool, error) {
		vol, err := e.longhornVolume(ctx)
		if err != nil || vol.Status.State != "detaching" {
			return false, err
		}
		return e.instanceManagerIs(ctx, live, longhorn.InstanceManagerRunning)
	})
	if ok, err := e.instanceManagerIs(ctx, lost, longhorn.InstanceManagerRunning, replicaOn[lost]); !ok || err != nil {
		t.Fatalf("lost node's InstanceManager not stale (running, listing %s): %v", replicaOn[lost], err)
	}
	if c, err := e.longhornNodeCondition(ctx, lost); err != nil || c.Status != "True" {
		t.Fatalf("Longhorn counted %s down before its InstanceManager could be checked stale (%+v, %v)", lost, c, err)
	}

	e.eventually("the lost node counted down: unknown, its list kept, the volume detached", 30*time.Second, func(ctx context.Context) (bool, error) {
		vol, err := e.longhornVolume(ctx)
		if err != nil || vol.Status.State != "detached" {
			return false, err
		}
		return e.instanceManagerIs(ctx, lost, longhorn.InstanceManagerUnknown, replicaOn[lost])
	})
	e.consistently("the dead node's VolumeAttachment still attached, no ticket back", 3*time.Second, func(ctx context.Context) (bool, error) {
		va, err := e.attachment(ctx, failed)
		if err != nil || va == nil || !va.Status.Attached || va.DeletionTimestamp != nil {
			return false, err
		}
		var lhva longhorn.VolumeAttachment
		err = e.c.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: e.volume.Name}, &lhva)
		return len(lhva.Spec.AttachmentTickets) == 0, err
	})

	// The Kubernetes release, as the operator does it after confirmation.
	e.releaseNode(failed)
	moved := e.waitForReadyGateway(time.Minute)
	if moved.Spec.NodeName != live {
		t.Fatalf("replacement on %s, want the only Ready node %s", moved.Spec.NodeName, live)
	}
	e.requireAttachedTo(live)
	e.eventually("the live node's replica runs again", 10*time.Second, func(ctx context.Context) (bool, error) {
		return e.instanceManagerIs(ctx, live, longhorn.InstanceManagerRunning, replicaOn[live])
	})
}

// replicasByNode maps each replica node to the volume's replica there.
func (e *env) replicasByNode() map[string]string {
	e.t.Helper()
	var replicas longhorn.ReplicaList
	if err := e.c.List(e.ctx, &replicas, client.InNamespace(longhornsim.Namespace), client.MatchingLabels{longhorn.VolumeLabel: e.volume.Name}); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range replicas.Items {
		out[r.Spec.NodeID] = r.Name
	}
	return out
}

// instanceManagerIs reports whether node's one InstanceManager is in state
// and lists exactly replicas, running.
func (e *env) instanceManagerIs(ctx context.Context, node, state string, replicas ...string) (bool, error) {
	var ims longhorn.InstanceManagerList
	if err := e.c.List(ctx, &ims, client.InNamespace(longhornsim.Namespace), client.MatchingLabels{"longhorn.io/node": node}); err != nil {
		return false, err
	}
	if len(ims.Items) != 1 {
		return false, nil
	}
	im := ims.Items[0]
	if im.Spec.NodeID != node || im.Status.CurrentState != state {
		return false, nil
	}
	listed := slices.Sorted(maps.Keys(im.Status.InstanceReplicas))
	for _, p := range im.Status.InstanceReplicas {
		if p.Status.State != "running" {
			return false, nil
		}
	}
	return slices.Equal(listed, slices.Sorted(slices.Values(replicas))), nil
}

// removeTicket deletes one ticket from the Longhorn VolumeAttachment the way
// the operator will: a merge patch under the object's resourceVersion.
func (e *env) removeTicket(id string) {
	e.t.Helper()
	e.eventually("ticket "+id+" removed", 5*time.Second, func(ctx context.Context) (bool, error) {
		var lhva longhorn.VolumeAttachment
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: e.volume.Name}, &lhva); err != nil {
			return false, err
		}
		if _, ok := lhva.Spec.AttachmentTickets[id]; !ok {
			return false, fmt.Errorf("no ticket %s in %v", id, keys(lhva.Spec.AttachmentTickets))
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": lhva.ResourceVersion},
			"spec":     map[string]any{"attachmentTickets": map[string]any{id: nil}},
		})
		if err != nil {
			return false, err
		}
		err = e.c.Patch(ctx, &lhva, client.RawPatch(types.MergePatchType, patch))
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// releaseNode is the Kubernetes release: force-delete the node's pods and
// empty its status.volumesInUse, so the attach-detach controller detaches.
func (e *env) releaseNode(node string) {
	e.t.Helper()
	pods, err := e.gatewayPods(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := range pods {
		if pods[i].Spec.NodeName == node {
			if err := e.c.Delete(e.ctx, &pods[i], client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				e.t.Fatal(err)
			}
		}
	}
	e.eventually("volumesInUse of "+node+" emptied", 5*time.Second, func(ctx context.Context) (bool, error) {
		var n corev1.Node
		if err := e.c.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
			return false, err
		}
		base := n.DeepCopy()
		n.Status.VolumesInUse = nil
		err := e.c.Status().Patch(ctx, &n, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

func (e *env) longhornVolume(ctx context.Context) (*longhorn.Volume, error) {
	var vol longhorn.Volume
	err := e.c.Get(ctx, client.ObjectKey{Namespace: longhornsim.Namespace, Name: e.volume.Name}, &vol)
	return &vol, err
}
