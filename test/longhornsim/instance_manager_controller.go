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

package longhornsim

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// instanceManagerReconciler plays longhorn-manager's instance manager
// controller and InstanceManagerMonitor for one node at a time (requests
// are keyed by node name): one InstanceManager per node, whose status
// instanceManagerStatus derives. It is the only writer of InstanceManagers.
type instanceManagerReconciler struct {
	client client.Client
}

var _ reconcile.Reconciler = &instanceManagerReconciler{}

func (r *instanceManagerReconciler) setupWithManager(mgr ctrl.Manager) error {
	byName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("longhornsim-instance-manager").
		Watches(&corev1.Node{}, byName).
		Watches(&longhorn.Node{}, byName).
		// A replica's process runs in the instance manager of its node.
		Watches(&longhorn.Replica{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if n := o.(*longhorn.Replica).Spec.NodeID; n != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: n}}}
			}
			return nil
		})).
		// Someone else's edit is undone.
		Watches(&longhorn.InstanceManager{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if n := o.(*longhorn.InstanceManager).Spec.NodeID; n != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: n}}}
			}
			return nil
		})).
		Complete(quietOnStop{r})
}

func (r *instanceManagerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	node := req.Name
	var k8sNode corev1.Node
	k8sNodePtr := &k8sNode
	if err := r.client.Get(ctx, client.ObjectKey{Name: node}, &k8sNode); apierrors.IsNotFound(err) {
		k8sNodePtr = nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting Node %s: %w", node, err)
	}
	lhNode := &longhorn.Node{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: node}, lhNode); apierrors.IsNotFound(err) {
		lhNode = nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting Longhorn Node %s: %w", node, err)
	}
	down, reachable := nodeDown(lhNode), kubeletRunning(k8sNodePtr)

	im := &longhorn.InstanceManager{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: instanceManagerName(node)}, im)
	switch {
	case apierrors.IsNotFound(err) && (down || !reachable):
		return ctrl.Result{}, nil
	case apierrors.IsNotFound(err):
		// The node's own manager creates its instance manager once its
		// Longhorn Node is up (controller/node_controller.go
		// syncInstanceManagers).
		im = &longhorn.InstanceManager{
			ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: instanceManagerName(node), Labels: instanceManagerLabels(node)},
			Spec:       longhorn.InstanceManagerSpec{NodeID: node},
		}
		if err := r.client.Create(ctx, im); err != nil {
			return ctrl.Result{}, client.IgnoreAlreadyExists(err)
		}
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("getting InstanceManager of %s: %w", node, err)
	}

	running, err := r.runningReplicas(ctx, node)
	if err != nil {
		return ctrl.Result{}, err
	}
	status, write := instanceManagerStatus(im.Status, down, reachable, running)
	if !write {
		return ctrl.Result{}, nil
	}
	base := im.DeepCopy()
	im.Status = status
	if err := patchStatusIfChanged(ctx, r.client, im, base); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating InstanceManager %s status: %w", im.Name, err)
	}
	return ctrl.Result{}, nil
}

// runningReplicas names the replicas on node recorded running. On a node
// whose instance manager answers, the volume controller records exactly
// the processes it runs (replicaState), so this is the monitor's list.
func (r *instanceManagerReconciler) runningReplicas(ctx context.Context, node string) ([]string, error) {
	var replicas longhorn.ReplicaList
	if err := r.client.List(ctx, &replicas, client.InNamespace(Namespace), client.MatchingFields{replicaNodeIDField: node}); err != nil {
		return nil, fmt.Errorf("listing Replicas on %s: %w", node, err)
	}
	var names []string
	for _, rep := range replicas.Items {
		if rep.Status.CurrentState == instanceRunning {
			names = append(names, rep.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}
