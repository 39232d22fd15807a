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

package far

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	"github.com/medik8s/common/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Controller is FAR's FenceAgentsRemediationReconciler.
type Controller struct {
	// Client is FAR's: the client of a manager from NewManager, which acts
	// as FAR's ServiceAccount (so the API server enforces FAR's RBAC) and
	// reads through its cache, as FAR does.
	Client client.Client
	// Executor runs the agents; the zero value runs the binaries.
	Executor Executor
	// Power, if set, is told the action of every agent that exited 0, before
	// FAR learns of it: the harness powers the machine off ("off") or off
	// and on again ("reboot").
	Power func(ctx context.Context, node, action string)

	mu     sync.Mutex
	events []Event
}

// Event is an event FAR records, on the CR or on the node.
type Event struct {
	Object, Type, Reason, Message string
}

var _ reconcile.Reconciler = &Controller{}

// SetupWithManager reconciles every FenceAgentsRemediation, in every
// namespace, as FAR does.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(GVK)
	return ctrl.NewControllerManagedBy(mgr).For(obj).Named("fence-agents-remediation").Complete(c)
}

// Reconcile is FAR's Reconcile, in its order: node, NHC's time-out,
// finalizer, deletion, NoSchedule taint, the agent, the strategy. Status
// is written once, at the end, if it changed.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, err error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK)
	if err := c.Client.Get(ctx, req.NamespacedName, u); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	far, err := fromUnstructured(u)
	if err != nil {
		return reconcile.Result{}, err
	}
	before := far.Status.deepCopy()
	defer func() {
		if statusErr := c.writeStatus(ctx, far, before); statusErr != nil {
			err = errors.Join(err, statusErr)
		}
	}()

	nodeName := NodeName(far)
	node := &corev1.Node{}
	if err := c.Client.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		// FAR stops here even for a CR being deleted: its finalizer stays.
		updateConditions(&far.Status, NodeNotFound, metav1.Now())
		c.record(far, corev1.EventTypeWarning, "NodeNotFound", "CR name doesn't match a node name")
		return reconcile.Result{}, nil
	}

	if _, timedOut := far.Annotations[annotations.NhcTimedOut]; timedOut {
		c.Executor.Remove(far.UID)
		if far.DeletionTimestamp != nil {
			return c.reconcileDelete(ctx, far, nodeName)
		}
		// Whatever it reached, Succeeded=True included.
		updateConditions(&far.Status, InterruptedByNHC, metav1.Now())
		c.record(far, corev1.EventTypeNormal, "RemediationStopped", "NHC added the timed-out annotation, remediation will be stopped")
		return reconcile.Result{}, nil
	}

	hasFinalizer := slices.Contains(far.Finalizers, Finalizer)
	switch {
	case !hasFinalizer && far.DeletionTimestamp == nil:
		far.Finalizers = append(far.Finalizers, Finalizer)
		if err := c.update(ctx, far); err != nil {
			return reconcile.Result{}, fmt.Errorf("failed to add finalizer to the CR - %w", err)
		}
		updateConditions(&far.Status, Started, metav1.Now())
		c.record(far, corev1.EventTypeNormal, "RemediationStarted", "Remediation started")
		// FAR requeues at once; the status write's event does the same here.
		return reconcile.Result{}, nil
	case hasFinalizer && far.DeletionTimestamp != nil:
		if !meta.IsStatusConditionTrue(far.Status.Conditions, SucceededType) {
			c.Executor.Remove(far.UID)
		}
		return c.reconcileDelete(ctx, far, nodeName)
	}

	if added, err := appendTaint(ctx, c.Client, nodeName, RemediationTaint()); err != nil {
		return reconcile.Result{}, err
	} else if added {
		c.recordNode(nodeName, "AddRemediationTaint", "Remediation taint was added")
	}

	switch {
	case meta.IsStatusConditionTrue(far.Status.Conditions, ProcessingType) &&
		!meta.IsStatusConditionTrue(far.Status.Conditions, FenceAgentActionSucceededType):
		return reconcile.Result{}, c.fence(ctx, far)
	case meta.IsStatusConditionTrue(far.Status.Conditions, FenceAgentActionSucceededType) &&
		!meta.IsStatusConditionTrue(far.Status.Conditions, SucceededType):
		return reconcile.Result{}, c.recover(ctx, far, nodeName)
	}
	return reconcile.Result{}, nil
}

// fence starts the agent unless it runs. A spec FAR refuses leaves the CR
// as it is (Processing, never fenced); a Secret it cannot read is retried
// with backoff.
func (c *Controller) fence(ctx context.Context, far *FenceAgentsRemediation) error {
	if c.Executor.Exists(far.UID) {
		return nil
	}
	params, retryable, err := BuildParams(ctx, c.Client, far)
	if err != nil {
		if retryable {
			return err
		}
		logf.FromContext(ctx).Info("FAR refuses the CR's parameters; it stays Processing", "error", err.Error())
		if errors.Is(err, ErrUnsupportedAction) {
			c.record(far, corev1.EventTypeWarning, "UnsupportedAction", "Unsupported action value in CR parameters")
		}
		return nil
	}
	spec := far.Spec.withDefaults()
	node, uid, action := NodeName(far), far.UID, params[actionParam]
	c.Executor.Start(ctx, uid, Command(spec.Agent, params), spec.RetryCount, spec.RetryInterval.Duration, spec.Timeout.Duration,
		func(ctx context.Context, out Outcome) {
			if out.Err == nil && c.Power != nil {
				c.Power(ctx, node, action)
			}
			c.reportFence(ctx, uid, out)
		})
	c.record(far, corev1.EventTypeNormal, "FenceAgentExecuted", "Fence agent was executed")
	return nil
}

// reportFence is the executor's updateStatusWithRetry: the CR, found by
// UID, gets FenceAgentSucceeded, FenceAgentTimedOut or FenceAgentFailed.
func (c *Controller) reportFence(ctx context.Context, uid types.UID, out Outcome) {
	reason := AgentSucceeded
	switch {
	case out.TimedOut:
		reason = AgentTimedOut
	case out.Err != nil:
		reason = AgentFailed
	}
	err := retry.OnError(retry.DefaultBackoff, apierrors.IsConflict, func() error {
		far, err := c.byUID(ctx, uid)
		if err != nil || far == nil {
			return err
		}
		before := far.Status.deepCopy()
		updateConditions(&far.Status, reason, metav1.Now())
		if reason == AgentSucceeded {
			c.record(far, corev1.EventTypeNormal, "FenceAgentSucceeded", "Fence agent was succeeded")
		}
		return c.writeStatus(ctx, far, before)
	})
	if err != nil {
		logf.FromContext(ctx).Error(err, "Failed to report the fence agent's outcome", "uid", uid)
	}
}

func (c *Controller) byUID(ctx context.Context, uid types.UID) (*FenceAgentsRemediation, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(GVK.GroupVersion().WithKind(Kind + "List"))
	if err := c.Client.List(ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].GetUID() == uid {
			return fromUnstructured(&list.Items[i])
		}
	}
	return nil, nil
}

// recover runs the strategy once the agent succeeded: FAR deletes every pod
// on the node (common's DeletePods, grace 0) or adds the out-of-service
// taint, and reports Succeeded at once, waiting for nothing.
func (c *Controller) recover(ctx context.Context, far *FenceAgentsRemediation, node string) error {
	switch far.Spec.withDefaults().RemediationStrategy {
	case ResourceDeletion:
		c.recordNode(node, "DeleteResources", "Manually delete pods from the unhealthy node")
		if err := resources.DeletePods(ctx, c.Client, node); err != nil {
			return err
		}
	case OutOfServiceTaint:
		if added, err := appendTaint(ctx, c.Client, node, OutOfServiceTaintOf()); err != nil {
			return err
		} else if added {
			c.recordNode(node, "AddOutOfServiceTaint", "The out-of-service taint was added")
		}
	default:
		return nil
	}
	updateConditions(&far.Status, FinishedSuccessfully, metav1.Now())
	c.Executor.Remove(far.UID)
	c.recordNode(node, "NodeRemediationCompleted", "Unhealthy node remediation was completed")
	c.record(far, corev1.EventTypeNormal, "RemediationFinished", "Remediation finished")
	return nil
}

// reconcileDelete is handleFARDeletion: the out-of-service taint (with that
// strategy, by key and effect, whoever added it), FAR's NoSchedule taint,
// then the finalizer.
func (c *Controller) reconcileDelete(ctx context.Context, far *FenceAgentsRemediation, node string) (reconcile.Result, error) {
	taints := []corev1.Taint{RemediationTaint()}
	if far.Spec.RemediationStrategy == OutOfServiceTaint {
		taints = []corev1.Taint{OutOfServiceTaintOf(), RemediationTaint()}
	}
	for _, taint := range taints {
		if err := removeTaint(ctx, c.Client, node, taint); apierrors.IsConflict(err) {
			return reconcile.Result{RequeueAfter: time.Second}, nil
		} else if err != nil {
			return reconcile.Result{}, err
		}
	}
	far.Finalizers = slices.DeleteFunc(far.Finalizers, func(f string) bool { return f == Finalizer })
	if err := c.update(ctx, far); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to remove finalizer from CR - %w", err)
	}
	return reconcile.Result{}, nil
}

// update writes the CR's metadata and spec, keeping its new resourceVersion.
func (c *Controller) update(ctx context.Context, far *FenceAgentsRemediation) error {
	u, err := far.toUnstructured()
	if err != nil {
		return err
	}
	if err := c.Client.Update(ctx, u); err != nil {
		return err
	}
	far.ResourceVersion = u.GetResourceVersion()
	return nil
}

// writeStatus is updateStatus: skipped for a CR on its way out, and here
// also when nothing changed; like FAR, it then waits (up to 5 s) for its
// cache to show the write, so the next pass does not act on a stale
// status.
func (c *Controller) writeStatus(ctx context.Context, far *FenceAgentsRemediation, before *Status) error {
	if equality.Semantic.DeepEqual(before, &far.Status) {
		return nil
	}
	if !slices.Contains(far.Finalizers, Finalizer) && far.DeletionTimestamp != nil {
		return nil
	}
	u, err := far.toUnstructured()
	if err != nil {
		return err
	}
	if err := c.Client.Status().Update(ctx, u); err != nil {
		return client.IgnoreNotFound(err)
	}
	stored, err := fromUnstructured(u)
	if err != nil {
		return err
	}
	written := stored.Status.LastUpdateTime
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		cached := &unstructured.Unstructured{}
		cached.SetGroupVersionKind(GVK)
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(u), cached); err != nil {
			return apierrors.IsNotFound(err), nil
		}
		got, err := fromUnstructured(cached)
		if err != nil || got.Status.LastUpdateTime == nil || written == nil {
			return err == nil, err
		}
		return !got.Status.LastUpdateTime.Before(written), nil
	})
}

// Events returns the events recorded so far.
func (c *Controller) Events() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events)
}

func (c *Controller) record(far *FenceAgentsRemediation, eventType, reason, message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, Event{Object: Kind + "/" + far.Namespace + "/" + far.Name, Type: eventType, Reason: reason, Message: message})
}

func (c *Controller) recordNode(node, reason, message string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, Event{Object: "Node/" + node, Type: corev1.EventTypeNormal, Reason: reason, Message: message})
}
