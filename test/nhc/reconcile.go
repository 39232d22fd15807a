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

	"github.com/medik8s/common/pkg/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pendingDeletionLog is logWhenCRPendingDeletionDuration: while a healthy
// node's CRs still exist, NHC comes back this long (plus a second) after
// first seeing it healthy, to log them; their deletion wakes it earlier
// through its watch on the CRs.
const pendingDeletionLog = 10 * time.Second

// Reconcile runs one pass of NHC's reconcile and returns when to run again.
func (e *Emulator) Reconcile(ctx context.Context) (time.Duration, error) {
	return e.reconcile(ctx, e.Client)
}

// reconcile is NHC's Reconcile for this NodeHealthCheck, in NHC's order:
// templates (a missing or invalid one disables it before anything is
// deleted); node conditions; pause; CRs of nodes gone or no longer
// selected; healthy nodes, whose CRs are deleted (after healthyDelay) and
// which count as healthy only once no CR is left; minHealthy and storm
// recovery, which skip remediation altogether; then each unhealthy node is
// remediated.
func (e *Emulator) reconcile(ctx context.Context, nodeReader client.Reader) (time.Duration, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.beginPass()()
	reason, err := e.checkTemplates(ctx)
	if err != nil {
		return 0, err
	}
	e.setDisabled(reason)
	switch reason {
	case ReasonTemplateNotFound:
		return templateNotFoundRequeue, nil
	case ReasonTemplateInvalid:
		return 0, nil
	}

	selector, err := metav1.LabelSelectorAsSelector(&e.Selector)
	if err != nil {
		return 0, fmt.Errorf("NodeHealthCheck %s: %w", e.Name, err)
	}
	nodeList := &corev1.NodeList{}
	if err := nodeReader.List(ctx, nodeList, client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return 0, fmt.Errorf("listing nodes: %w", err)
	}
	healthy, unhealthy, requeue := e.classify(nodeList.Items)

	if len(e.PauseRequests) > 0 {
		// NHC returns before it deletes any CR: a paused NodeHealthCheck
		// also keeps the CRs of recovered nodes.
		e.record("Normal", "RemediationSkipped", "Postponing potential remediations because of pause requests")
		return requeue, nil
	}
	if err := e.deleteOrphans(ctx, nodeList.Items); err != nil {
		return 0, err
	}

	healthyCount, delay, err := e.handleHealthyNodes(ctx, healthy)
	if err != nil {
		return 0, err
	}
	requeue = minRequeue(requeue, delay)
	if len(unhealthy) == 0 {
		return requeue, nil
	}

	minHealthy, err := e.minHealthy(len(nodeList.Items))
	if err != nil {
		return 0, err
	}
	skip := healthyCount < minHealthy
	if skip {
		e.record("Warning", "RemediationSkipped", "Skipped remediation because the number of healthy nodes selected by the selector is %d and should equal or exceed %d", healthyCount, minHealthy)
	}
	storm, stormRequeue := e.evaluateStorm(skip)
	requeue = minRequeue(requeue, stormRequeue)
	if storm && !skip {
		e.record("Warning", "RemediationSkipped", "Storm recovery active: skipping creation of new remediations")
		skip = true
	}
	for _, node := range unhealthy {
		e.markUnhealthy(node.Name)
		if skip || e.excluded(node) {
			continue
		}
		_, delay, err := e.remediate(ctx, node)
		if err != nil {
			return 0, err
		}
		requeue = minRequeue(requeue, delay)
	}
	return requeue, nil
}

// handleHealthyNodes deletes the CRs of healthy nodes and counts the nodes
// that have none left, the only ones NHC counts as healthy.
func (e *Emulator) handleHealthyNodes(ctx context.Context, healthy []*corev1.Node) (int, time.Duration, error) {
	count := 0
	var requeue time.Duration
	for _, node := range healthy {
		crs, delay, err := e.handleHealthyNode(ctx, node.Name)
		if err != nil {
			return 0, 0, err
		}
		requeue = minRequeue(requeue, delay)
		if len(crs) == 0 {
			e.markHealthy(node.Name)
			count++
			continue
		}
		if since := e.markConditionsHealthy(node.Name, e.Clock.Now()); since != nil {
			requeue = minRequeue(requeue, pendingDeletionRequeue(crs, *since))
		}
	}
	return count, requeue, nil
}

// minHealthy is getMinHealthy for spec.minHealthy (the CRD default, 51%,
// when unset).
func (e *Emulator) minHealthy(selected int) (int, error) {
	minHealthy := defaultMinHealthy
	if e.MinHealthy != nil {
		minHealthy = *e.MinHealthy
	}
	want, err := intstr.GetScaledValueFromIntOrPercent(&minHealthy, selected, true)
	if err != nil {
		return 0, fmt.Errorf("minHealthy %s: %w", minHealthy.String(), err)
	}
	return want, nil
}

// pendingDeletionRequeue is when NHC looks again at a healthy node whose CRs
// still exist: to log them once all have been deleted for
// pendingDeletionLog since it first saw the node healthy.
func pendingDeletionRequeue(crs []unstructured.Unstructured, healthySince time.Time) time.Duration {
	threshold := healthySince.Add(-pendingDeletionLog)
	var requeue time.Duration
	for i := range crs {
		deleted := crs[i].GetDeletionTimestamp()
		switch {
		case deleted == nil:
			requeue = minRequeue(requeue, pendingDeletionLog+time.Second)
		case deleted.After(threshold):
			requeue = minRequeue(requeue, deleted.Sub(threshold)+time.Second)
		}
	}
	return requeue
}

// classify sorts nodes by the unhealthy conditions, as NHC's isHealthy
// (internal/controller/utils/conditions.go) does: the first condition whose
// type and status the node has decides; past its duration the node is
// unhealthy, before it neither healthy nor unhealthy yet (NHC's "soon
// matching"), and the pass comes back 1 s after it would match.
func (e *Emulator) classify(nodes []corev1.Node) (healthy, unhealthy []*corev1.Node, requeue time.Duration) {
	now := e.Clock.Now()
	unhealthyIf := e.unhealthyConditions()
	for i := range nodes {
		node := &nodes[i]
		matchesAt, matched := matchingCondition(node, unhealthyIf)
		switch {
		case !matched:
			healthy = append(healthy, node)
		case now.After(matchesAt):
			unhealthy = append(unhealthy, node)
		default:
			requeue = minRequeue(requeue, matchesAt.Sub(now)+time.Second)
		}
	}
	return healthy, unhealthy, requeue
}

// matchingCondition returns when the first unhealthy condition the node is
// in has lasted its duration.
func matchingCondition(node *corev1.Node, unhealthyIf []UnhealthyCondition) (time.Time, bool) {
	for _, c := range unhealthyIf {
		for _, nc := range node.Status.Conditions {
			if nc.Type == c.Type && nc.Status == c.Status {
				return nc.LastTransitionTime.Add(c.Duration), true
			}
		}
	}
	return time.Time{}, false
}

// NodeHealthy is the healthy-node part of a pass for one node, followed by
// the next pass's look: it deletes the node's CRs (after healthyDelay,
// unless the node is manually confirmed healthy) and returns how many are
// left. Once none is, the node counts as healthy and its lease goes.
func (e *Emulator) NodeHealthy(ctx context.Context, node string) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	crs, _, err := e.handleHealthyNode(ctx, node)
	if err == nil && len(crs) > 0 {
		crs, _, err = e.handleHealthyNode(ctx, node)
	}
	if err == nil && len(crs) == 0 {
		e.markHealthy(node)
	}
	return len(crs), err
}

// handleHealthyNode is NHC's HandleHealthyNode. It returns the CRs it
// found (deleted or kept) and when a delayed one may go.
func (e *Emulator) handleHealthyNode(ctx context.Context, nodeName string) ([]unstructured.Unstructured, time.Duration, error) {
	crs, err := e.ForNode(ctx, nodeName)
	if err != nil {
		return nil, 0, err
	}
	node := &corev1.Node{}
	if err := e.Client.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return crs, 0, fmt.Errorf("getting node %s: %w", nodeName, err)
	}
	_, confirmed := node.Annotations[ManuallyConfirmedHealthyAnnotation]
	if len(crs) == 0 {
		return nil, 0, e.cleanUp(ctx, node, confirmed)
	}
	var requeue time.Duration
	for i := range crs {
		if !confirmed {
			delay, err := e.deletionDelay(ctx, &crs[i])
			if err == nil && delay != 0 {
				if delay > 0 {
					requeue = minRequeue(requeue, delay+time.Second)
				}
				continue
			}
		}
		if err := e.deleteCR(ctx, &crs[i]); err != nil {
			return crs, 0, err
		}
	}
	return crs, requeue, nil
}

// deletionDelay is NHC's calcCrDeletionDelay: with a positive healthyDelay,
// the first healthy sighting is stamped on the CR and the CR stays for that
// long after it; negative keeps it until the node is manually confirmed
// healthy. The stamp is never removed, also not if the node fails again.
func (e *Emulator) deletionDelay(ctx context.Context, cr *unstructured.Unstructured) (time.Duration, error) {
	switch {
	case e.HealthyDelay == nil || *e.HealthyDelay == 0:
		return 0, nil
	case *e.HealthyDelay < 0:
		return -1, nil
	}
	now := e.Clock.Now()
	if stamp, ok := cr.GetAnnotations()[HealthyDelayAnnotation]; ok {
		since, err := time.Parse(time.RFC3339, stamp)
		if err != nil {
			return 0, err
		}
		if until := since.Add(*e.HealthyDelay); now.Before(until) {
			return until.Sub(now), nil
		}
		return 0, nil
	}
	ann := cr.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[HealthyDelayAnnotation] = now.UTC().Format(time.RFC3339)
	cr.SetAnnotations(ann)
	if err := e.Client.Update(ctx, cr); err != nil {
		return *e.HealthyDelay, fmt.Errorf("stamping healthy delay on remediation %s: %w", cr.GetName(), err)
	}
	return *e.HealthyDelay, nil
}

// cleanUp is NHC's CleanUp once a node has no CR left: the manual
// confirmation is removed from the Node and the lease invalidated.
func (e *Emulator) cleanUp(ctx context.Context, node *corev1.Node, confirmed bool) error {
	if confirmed {
		delete(node.Annotations, ManuallyConfirmedHealthyAnnotation)
		if err := e.Client.Update(ctx, node); err != nil {
			return fmt.Errorf("removing %s from node %s: %w", ManuallyConfirmedHealthyAnnotation, node.Name, err)
		}
	}
	return e.invalidateLease(ctx, node.Name)
}

// NodeDeleted deletes the CRs of a node that no longer exists, as NHC's
// deleteOrphanedRemediationCRs does, and returns how many are left (being
// deleted, or expecting permanent deletion and not yet succeeded).
func (e *Emulator) NodeDeleted(ctx context.Context, node string) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.deleteOrphansIf(ctx, func(n string) bool { return n == node }); err != nil {
		return 0, err
	}
	left, err := e.ForNode(ctx, node)
	return len(left), err
}

// deleteOrphans deletes the CRs whose node is not among the selected nodes.
func (e *Emulator) deleteOrphans(ctx context.Context, nodes []corev1.Node) error {
	names := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		names[n.Name] = true
	}
	return e.deleteOrphansIf(ctx, func(n string) bool { return !names[n] })
}

// deleteOrphansIf is NHC's deleteOrphanedRemediationCRs for the nodes gone
// reports: owned CRs not being deleted, except those expecting permanent
// node deletion that have not succeeded; lease and status are cleaned up
// first, as NHC never comes back for them.
func (e *Emulator) deleteOrphansIf(ctx context.Context, gone func(node string) bool) error {
	orphans, err := e.listCRs(ctx, func(cr *unstructured.Unstructured) bool {
		if cr.GetDeletionTimestamp() != nil || !e.owns(cr) {
			return false
		}
		if conditionStatus(cr, conditions.PermanentNodeDeletionExpectedType) == metav1.ConditionTrue &&
			Succeeded(cr) != metav1.ConditionTrue {
			return false
		}
		return gone(nodeOf(cr))
	})
	if err != nil {
		return err
	}
	for i := range orphans {
		node := nodeOf(&orphans[i])
		if err := e.invalidateLease(ctx, node); err != nil {
			return err
		}
		e.markHealthy(node)
		if err := e.deleteCR(ctx, &orphans[i]); err != nil {
			return err
		}
	}
	return nil
}
