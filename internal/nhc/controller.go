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

package nhc

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultUnhealthyDuration is how long NHC's default unhealthy conditions
// (Ready False or Unknown) must hold before it remediates.
const DefaultUnhealthyDuration = 300 * time.Second

// Controller runs an Emulator against a cluster like NHC does: a node whose
// Ready condition has been False or Unknown for UnhealthyDuration gets a
// remediation CR; a Ready node, or a deleted one, gets its CRs deleted; a
// CR past the classic lease deadline is marked timed out.
type Controller struct {
	Emulator *Emulator
	// Nodes is the client nodes are read with (NHC's own rights).
	Nodes client.Reader
	// UnhealthyDuration; zero means DefaultUnhealthyDuration.
	UnhealthyDuration time.Duration
	// OnCreate, if set, is told about every CR created (for timelines).
	OnCreate func(node, name string)
}

func (c *Controller) unhealthyDuration() time.Duration {
	if c.UnhealthyDuration > 0 {
		return c.UnhealthyDuration
	}
	return DefaultUnhealthyDuration
}

// Reconcile handles one node.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)
	node := &corev1.Node{}
	if err := c.Nodes.Get(ctx, req.NamespacedName, node); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("getting node %s: %w", req.Name, err)
		}
		remaining, err := c.Emulator.NodeDeleted(ctx, req.Name)
		return requeueWhile(remaining > 0), err
	}

	ready := readyCondition(node)
	if ready == nil || ready.Status == corev1.ConditionTrue {
		remaining, err := c.Emulator.NodeHealthy(ctx, node.Name)
		if remaining > 0 {
			log.Info("Waiting for remediation CRs to be deleted before counting the node healthy", "remaining", remaining)
		}
		return requeueWhile(remaining > 0), err
	}

	unhealthyFor := c.Emulator.Clock.Since(ready.LastTransitionTime.Time)
	if wait := c.unhealthyDuration() - unhealthyFor; wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	existing, err := c.Emulator.ForNode(ctx, node.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	cr, err := c.Emulator.Remediate(ctx, node)
	if err != nil || cr == nil {
		return reconcile.Result{}, err
	}
	if len(existing) == 0 && c.OnCreate != nil {
		c.OnCreate(node.Name, cr.GetName())
	}
	if overdue, err := c.Emulator.LeaseOverdue(ctx, node.Name); err != nil || overdue {
		if err == nil {
			err = c.Emulator.TimeOut(ctx, cr)
		}
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
}

func requeueWhile(pending bool) reconcile.Result {
	if pending {
		return reconcile.Result{RequeueAfter: time.Second}
	}
	return reconcile.Result{}
}

func readyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// SetupWithManager watches nodes.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&corev1.Node{}).Named("nhc-emulator").Complete(c)
}
