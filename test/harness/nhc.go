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
	"sync"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// Remediation is one NodeHealthCheck with its S3GWRemediationTemplate.
type Remediation struct {
	// Name names the NodeHealthCheck and the template.
	Name string
	// NodeSelector selects the nodes the NodeHealthCheck watches, like its
	// spec.selector; label each node with it when adding it.
	NodeSelector map[string]string
	// Spec is the template's spec.template.spec.
	Spec s3gwv1alpha1.S3GWRemediationSpec
	// UnhealthyDuration is how long a node must be NotReady before a CR is
	// created; zero means Env.UnhealthyDuration.
	UnhealthyDuration time.Duration
}

// startClusterSide runs the NodeHealthCheck emulators and the FAR stand-in
// in a manager of their own, as they would run outside the operator.
func (e *Env) startClusterSide(ctx context.Context) error {
	mgr, err := newManager(e.Cluster.RESTConfig(), e.log.WithName("cluster-side"))
	if err != nil {
		return err
	}
	e.nhc = &nhcDispatcher{nodes: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.Node{}).Named("nhc-emulators").Complete(e.nhc); err != nil {
		return fmt.Errorf("setting up the NodeHealthCheck emulators: %w", err)
	}
	e.fencer = &farFencer{client: e.Client, nodes: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.Node{}).Named("far-fencer").Complete(e.fencer); err != nil {
		return fmt.Errorf("setting up the FAR stand-in: %w", err)
	}
	e.oosFencer = &oosFencer{client: e.Client, nodes: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.Node{}).Named("oos-fencer").Complete(e.oosFencer); err != nil {
		return fmt.Errorf("setting up the out-of-service fencer: %w", err)
	}
	e.infra, err = run(ctx, mgr, &corev1.Node{})
	return err
}

// nhcClient is a client that acts as NodeHealthCheck's service account, so
// that a verb missing from the operator's ext-remediation ClusterRole fails.
func (e *Env) nhcClient() (client.Client, error) {
	cfg := e.Cluster.RESTConfig()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: NHCUser()}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("creating the NodeHealthCheck client: %w", err)
	}
	return c, nil
}

// EnableRemediation creates the template and a NodeHealthCheck that
// references it and, unless NHC is external, starts emulating that
// NodeHealthCheck (each node event runs a pass of the NodeHealthChecks whose
// selector matches the node, or of all of them for a deleted node). It
// returns the emulator (nil with an external NHC).
func (e *Env) EnableRemediation(ctx context.Context, r Remediation) (*nhc.Emulator, error) {
	template := &s3gwv1alpha1.S3GWRemediationTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: TemplateNamespace, Name: r.Name},
		Spec:       s3gwv1alpha1.S3GWRemediationTemplateSpec{Template: s3gwv1alpha1.S3GWRemediationTemplateResource{Spec: r.Spec}},
	}
	if err := e.Client.Create(ctx, template); err != nil {
		return nil, fmt.Errorf("creating S3GWRemediationTemplate %s: %w", r.Name, err)
	}
	if !e.opts.NoOperator {
		// The operator annotates its templates for multiple-templates
		// support; NHC names CRs by it, so wait before any node can fail.
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := e.Client.Get(ctx, client.ObjectKeyFromObject(template), template); err != nil {
				return false, err
			}
			_, ok := template.Annotations[annotations.MultipleTemplatesSupportedAnnotation]
			return ok, nil
		})
		if err != nil {
			return nil, fmt.Errorf("waiting for the operator to annotate S3GWRemediationTemplate %s: %w", r.Name, err)
		}
	}
	duration := r.UnhealthyDuration
	if duration == 0 {
		duration = e.UnhealthyDuration()
	}
	nhcClient, err := e.nhcClient()
	if err != nil {
		return nil, err
	}
	// The NodeHealthCheck a real NHC operator would act on: its default
	// unhealthy conditions with the given duration, the selector, and
	// minHealthy 0 so that a small pool with one failed node is still
	// remediated (NHC's default 51% blocks a two-node pool).
	em := &nhc.Emulator{
		Client: nhcClient, Name: r.Name, Clock: clock.RealClock{},
		Template: nhc.TemplateRef{
			APIVersion: s3gwv1alpha1.GroupVersion.String(), Kind: templateKind,
			Namespace: TemplateNamespace, Name: r.Name,
		},
		Selector:          metav1.LabelSelector{MatchLabels: r.NodeSelector},
		MinHealthy:        ptr.To(intstr.FromString("0%")),
		UnhealthyDuration: duration,
	}
	if err := em.CreateNodeHealthCheck(ctx, e.Client); err != nil {
		return nil, err
	}
	if e.opts.ExternalNHC {
		return nil, nil
	}
	e.nhc.add(labels.SelectorFromSet(r.NodeSelector), &nhc.Controller{Emulator: em, Nodes: e.nhc.nodes})
	return em, nil
}

// nhcDispatcher hands each node to the emulated NodeHealthCheck whose
// selector matches it, as each real NodeHealthCheck watches only its nodes.
type nhcDispatcher struct {
	nodes client.Reader

	mu     sync.RWMutex
	checks []nhcCheck
}

type nhcCheck struct {
	selector labels.Selector
	ctrl     *nhc.Controller
}

var _ reconcile.Reconciler = &nhcDispatcher{}

func (d *nhcDispatcher) add(selector labels.Selector, c *nhc.Controller) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.checks = append(d.checks, nhcCheck{selector: selector, ctrl: c})
}

func (d *nhcDispatcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	d.mu.RLock()
	checks := append([]nhcCheck(nil), d.checks...)
	d.mu.RUnlock()

	node := &corev1.Node{}
	err := d.nodes.Get(ctx, req.NamespacedName, node)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	var result reconcile.Result
	for _, c := range checks {
		// A deleted node goes to every check: each deletes only its own CRs.
		if err == nil && !c.selector.Matches(labels.Set(node.Labels)) {
			continue
		}
		res, rerr := c.ctrl.Reconcile(ctx, req)
		if rerr != nil {
			return reconcile.Result{}, rerr
		}
		if res.RequeueAfter > 0 && (result.RequeueAfter == 0 || res.RequeueAfter < result.RequeueAfter) {
			result.RequeueAfter = res.RequeueAfter
		}
	}
	return result, nil
}
