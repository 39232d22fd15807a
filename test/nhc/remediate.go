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
	"errors"
	"fmt"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	"github.com/medik8s/common/pkg/labels"
	"github.com/medik8s/common/pkg/nodes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NHC's remediate for one unhealthy node
// (internal/controller/nodehealthcheck_controller.go).

// errNoTemplateLeft: every escalation step timed out.
var errNoTemplateLeft = errors.New("no template left")

// errNotOwned: a matching CR exists that this NodeHealthCheck did not
// create; NHC creates nothing then.
var errNotOwned = errors.New("remediation CR exists but is not owned by this NodeHealthCheck")

// controlPlaneRetry is how long NHC waits before retrying a control-plane
// node while another one is remediated.
const controlPlaneRetry = time.Minute

// Remediate runs NHC's remediation of one unhealthy node: the exclude
// label, one control-plane node at a time, the current template, the lease,
// then the CR, found or created, and its timeout. It returns the node's CR
// for the current step, or nil when NHC created none.
func (e *Emulator) Remediate(ctx context.Context, node *corev1.Node) (*unstructured.Unstructured, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.markUnhealthy(node.Name)
	if e.excluded(node) {
		return nil, nil
	}
	cr, _, err := e.remediate(ctx, node)
	return cr, err
}

// excluded is NHC's isNodeRemediationExcluded; an empty label value only
// earns a warning.
func (e *Emulator) excluded(node *corev1.Node) bool {
	v, ok := node.Labels[labels.ExcludeFromRemediation]
	if ok && v == "" {
		e.record("Warning", "InvalidNodeLabel", "Node %s has exclude-from-remediation label with empty value, label will be ignored. Set value to 'true' to exclude node from remediation", node.Name)
	}
	if v == "true" {
		e.record("Warning", "RemediationSkipped", "Remediation skipped on node %s: node has Exclude from Remediation label", node.Name)
		return true
	}
	return false
}

// remediate returns the current step's CR (nil if none) and when to come
// back. The caller holds e.mu.
func (e *Emulator) remediate(ctx context.Context, node *corev1.Node) (*unstructured.Unstructured, time.Duration, error) {
	controlPlane := nodes.IsControlPlane(node)
	if controlPlane {
		allowed, err := e.controlPlaneAllowed(ctx, node.Name)
		if err != nil || !allowed {
			if err == nil {
				e.record("Warning", "RemediationSkipped", "Skipping remediation of %s for preventing control plane / etcd quorum loss, going to retry in a minute", node.Name)
			}
			return nil, controlPlaneRetry, err
		}
	}
	step, timeout, err := e.currentStep(node.Name)
	if errors.Is(err, errNoTemplateLeft) {
		e.record("Warning", "NoTemplateLeft", "Remediation timed out, and no template left to try. didn't find a template to use for NHC %s and node %s", e.Name, node.Name)
		return nil, 0, nil
	}
	generated, err := e.generateCR(ctx, node, step, controlPlane)
	if err != nil {
		return nil, 0, err
	}
	current, previous := e.remediationDuration(generated)

	cr, created, leaseRequeue, err := e.createCR(ctx, generated, node.Name, current, previous)
	var held errLeaseHeld
	switch {
	case errors.As(err, &held):
		e.record("Warning", "RemediationSkipped", "Skipped remediation of node: %s, because node lease is already taken", node.Name)
		return nil, leaseRequeue, nil
	case errors.Is(err, errLeaseOverdue):
		return cr, 0, e.timeOutStep(ctx, node.Name, cr, step)
	case errors.Is(err, errNotOwned):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	}

	e.markStarted(node.Name, cr, created)
	if created {
		e.record("Normal", "RemediationCreated", "Created remediation object for node %s", node.Name)
		if e.OnCreate != nil {
			e.OnCreate(node.Name, cr.GetName())
		}
		if timeout == nil {
			return cr, leaseRequeue, nil
		}
		return cr, minRequeue(leaseRequeue, *timeout+time.Second), nil
	}
	if timeout == nil {
		return cr, leaseRequeue, nil
	}
	requeue, err := e.endStepIfDue(ctx, node.Name, cr, step, *timeout)
	return cr, minRequeue(leaseRequeue, requeue), err
}

// endStepIfDue ends the escalation step of an existing CR once its timeout
// has passed or the CR reports Succeeded=False; the next step then starts
// about a second later. Otherwise it says when the step times out.
func (e *Emulator) endStepIfDue(ctx context.Context, node string, cr *unstructured.Unstructured, step TemplateRef, timeout time.Duration) (time.Duration, error) {
	started := e.startedRemediation(node, cr.GroupVersionKind(), step.Name)
	if started == nil {
		return 0, errors.New("failed to find started remediation in status for handling timeout")
	}
	if started.TimedOut != nil {
		return 0, errors.New("unexpected timeout found on started remediation in status")
	}
	now := e.Clock.Now()
	timeoutAt := started.Started.Add(timeout)
	if !now.After(timeoutAt) && Succeeded(cr) != metav1.ConditionFalse {
		return timeoutAt.Sub(now), nil
	}
	if Succeeded(cr) != metav1.ConditionTrue {
		if err := e.annotateTimedOut(ctx, cr, now); err != nil {
			return 0, err
		}
	}
	started.TimedOut = &now
	return time.Second, nil
}

// timeOutStep handles an overdue lease: the CR is annotated unless it
// succeeded, and the step is marked timed out in status.
func (e *Emulator) timeOutStep(ctx context.Context, node string, cr *unstructured.Unstructured, step TemplateRef) error {
	now := e.Clock.Now()
	if Succeeded(cr) != metav1.ConditionTrue {
		if err := e.annotateTimedOut(ctx, cr, now); err != nil {
			return err
		}
	}
	started := e.startedRemediation(node, cr.GroupVersionKind(), step.Name)
	if started == nil {
		return errors.New("failed to find started remediation in status for handling overdue lease")
	}
	started.TimedOut = &now
	return nil
}

// controlPlaneAllowed: no CR labelled as a control-plane remediation, of any
// owner, is for another node (NHC skips the etcd check off OpenShift).
func (e *Emulator) controlPlaneAllowed(ctx context.Context, node string) (bool, error) {
	crs, err := e.listCRs(ctx, func(cr *unstructured.Unstructured) bool {
		_, cp := cr.GetLabels()[ControlPlaneLabel]
		return cp
	})
	if err != nil {
		return false, err
	}
	for i := range crs {
		if nodeOf(&crs[i]) == node {
			return true, nil
		}
	}
	return len(crs) == 0, nil
}

// currentStep is NHC's GetCurrentTemplateWithTimeout: the classic template
// without a timeout, or the first escalation step, by order, that status
// does not record as timed out.
func (e *Emulator) currentStep(node string) (TemplateRef, *time.Duration, error) {
	if len(e.Escalation) == 0 {
		return e.Template, nil, nil
	}
	for _, s := range e.sortedSteps() {
		if !e.timedOutStep(node, s.Template) {
			return s.Template, ptr.To(s.Timeout), nil
		}
	}
	return TemplateRef{}, nil, errNoTemplateLeft
}

// remediationDuration is NHC's GetRemediationDuration: the classic duration,
// or the timeout of the first step whose kind is the CR's (so a second step
// of one kind counts with the first one's timeout), plus the timeouts of
// the steps ordered before that one.
func (e *Emulator) remediationDuration(cr *unstructured.Unstructured) (current, previous time.Duration) {
	if len(e.Escalation) == 0 {
		return e.timeout(), 0
	}
	// NHC sorts the spec's steps in place when it picks the current one.
	steps := e.sortedSteps()
	var step *Step
	for i := range steps {
		if steps[i].Template.RemediationGVK().Kind == cr.GetKind() {
			step = &steps[i]
			break
		}
	}
	if step == nil {
		return e.timeout(), 0
	}
	for _, s := range steps {
		if s.Order < step.Order {
			previous += s.Timeout
		}
	}
	return step.Timeout, previous
}

// generateCR builds the CR as NHC's generateRemediationCR does.
func (e *Emulator) generateCR(ctx context.Context, node *corev1.Node, ref TemplateRef, controlPlane bool) (*unstructured.Unstructured, error) {
	template := &unstructured.Unstructured{}
	template.SetGroupVersionKind(ref.GVK())
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, template); err != nil {
		return nil, fmt.Errorf("getting template %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	spec, found, err := unstructured.NestedMap(template.Object, "spec", "template", "spec")
	if err != nil || !found {
		return nil, fmt.Errorf("invalid template %s/%s, didn't find spec.template.spec", ref.Namespace, ref.Name)
	}

	cr := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	cr.SetGroupVersionKind(ref.RemediationGVK())
	cr.SetNamespace(template.GetNamespace())
	if _, multi := template.GetAnnotations()[annotations.MultipleTemplatesSupportedAnnotation]; multi {
		cr.SetGenerateName(node.Name + "-")
	} else {
		cr.SetName(node.Name)
	}
	cr.SetAnnotations(map[string]string{
		annotations.NodeNameAnnotation: node.Name,
		TemplateNameAnnotation:         template.GetName(),
	})
	crLabels := map[string]string{PartOfLabel: PartOfValue}
	if controlPlane {
		crLabels[ControlPlaneLabel] = ""
	}
	cr.SetLabels(crLabels)
	cr.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: NodeHealthCheckGVK.GroupVersion().String(), Kind: NodeHealthCheckGVK.Kind,
		Name: e.Name, UID: e.uid, Controller: ptr.To(false),
	}})
	return cr, nil
}

// createCR is NHC's CreateRemediationCR: an existing matching CR, if this
// NodeHealthCheck owns it, has its lease managed; otherwise the lease is
// obtained and the CR created with a plain Create.
func (e *Emulator) createCR(ctx context.Context, generated *unstructured.Unstructured, node string, current, previous time.Duration) (cr *unstructured.Unstructured, created bool, requeue time.Duration, err error) {
	existing, err := e.findCR(ctx, generated)
	if err != nil {
		return nil, false, 0, err
	}
	if existing != nil {
		if !e.owns(existing) {
			return existing, false, 0, errNotOwned
		}
		requeue, err := e.manageLease(ctx, node, current, previous)
		return existing, false, requeue, err
	}
	requeue, err = e.obtainLease(ctx, node, current)
	if err != nil {
		return nil, false, requeue, err
	}
	if err := e.Client.Create(ctx, generated); err != nil {
		return nil, false, 0, fmt.Errorf("creating remediation for node %s: %w", node, err)
	}
	return generated, true, requeue, nil
}

// minRequeue is the shorter of two non-zero delays.
func minRequeue(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
