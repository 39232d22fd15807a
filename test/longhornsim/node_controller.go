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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// nodeReconciler plays longhorn-manager's node controller: it keeps one
// Longhorn Node per Kubernetes node and mirrors the Kubernetes node's
// readiness into its Ready condition. It is the only writer of Longhorn
// Nodes.
type nodeReconciler struct {
	client client.Client
	now    func() time.Time
}

var _ reconcile.Reconciler = &nodeReconciler{}

func (r *nodeReconciler) setupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("longhornsim-node").
		For(&longhorn.Node{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: Namespace, Name: o.GetName()}}}
		})).
		Complete(quietOnStop{r})
}

func (r *nodeReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var k8sNode corev1.Node
	k8sNodePtr := &k8sNode
	if err := r.client.Get(ctx, client.ObjectKey{Name: req.Name}, &k8sNode); apierrors.IsNotFound(err) {
		k8sNodePtr = nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting Node %s: %w", req.Name, err)
	}

	var lhNode longhorn.Node
	err := r.client.Get(ctx, req.NamespacedName, &lhNode)
	switch {
	case apierrors.IsNotFound(err) && k8sNodePtr == nil:
		return ctrl.Result{}, nil
	case apierrors.IsNotFound(err):
		// longhorn-manager's DaemonSet pod registers its node on start.
		lhNode = longhorn.Node{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: req.Name}}
		if err := r.client.Create(ctx, &lhNode); err != nil {
			return ctrl.Result{}, fmt.Errorf("creating Longhorn Node %s: %w", req.Name, err)
		}
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("getting Longhorn Node %s: %w", req.Name, err)
	}

	now := r.now()
	ready := longhornNodeReadiness(k8sNodePtr, now)
	base := lhNode.DeepCopy()
	setReadyConditions(&lhNode, ready, now)
	if err := patchStatusIfChanged(ctx, r.client, &lhNode, base); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating Longhorn Node %s status: %w", req.Name, err)
	}
	return ctrl.Result{RequeueAfter: ready.recheckAfter}, nil
}

// setReadyConditions writes Ready and Schedulable, moving the transition
// time only when a status changes, as Longhorn does.
func setReadyConditions(n *longhorn.Node, ready readiness, now time.Time) {
	status, schedulable := corev1.ConditionFalse, corev1.ConditionFalse
	if ready.ready {
		status, schedulable = corev1.ConditionTrue, corev1.ConditionTrue
	}
	setCondition(&n.Status.Conditions, longhorn.Condition{
		Type: longhorn.NodeConditionReady, Status: string(status), Reason: ready.reason, Message: ready.message,
	}, now)
	setCondition(&n.Status.Conditions, longhorn.Condition{
		Type: "Schedulable", Status: string(schedulable), Reason: ready.reason, Message: ready.message,
	}, now)
}

func setCondition(conds *[]longhorn.Condition, c longhorn.Condition, now time.Time) {
	if old := condition(*conds, c.Type); old != nil {
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		*old = c
		return
	}
	c.LastTransitionTime = metav1.NewTime(now)
	*conds = append(*conds, c)
}
