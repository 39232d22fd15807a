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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// ShippedUnhealthyDuration is the Ready=Unknown duration of the sample
// NodeHealthCheck (config/samples/remediation_v1alpha1_nodehealthcheck.yaml,
// docs/configuration.md#choosing-the-unhealthy-duration): a node the
// node-lifecycle controller marks Unknown is remediated this long after.
// The benchmarks and the demo run it; a test holds it equal to the sample.
const ShippedUnhealthyDuration = 2 * time.Second

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
	err = ctrl.NewControllerManagedBy(mgr).Named("nhc-emulators").
		Watches(&corev1.Node{}, handler.Funcs{
			CreateFunc: func(_ context.Context, ev event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				e.nhc.enqueue(ev.Object, q)
			},
			UpdateFunc: func(_ context.Context, ev event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				e.nhc.enqueue(ev.ObjectNew, q)
			},
			// A deleted node goes to every check: each deletes only its own CRs.
			DeleteFunc: func(_ context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				e.nhc.enqueue(nil, q)
			},
		}).
		Complete(e.nhc)
	if err != nil {
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
	e.floorReleaser = &floorReleaser{client: e.Client, nodes: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.Node{}).Named("release-at-notready").Complete(e.floorReleaser); err != nil {
		return fmt.Errorf("setting up the release at NotReady: %w", err)
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
	e.nhc.add(r.Name, labels.SelectorFromSet(r.NodeSelector), &nhc.Controller{Emulator: em, Nodes: e.nhc.nodes})
	return em, nil
}

// nhcDispatcher runs the emulated NodeHealthCheck whose selector matches a
// node that changed. Like a real NHC, each keeps one queue entry (its own
// name) however many of its nodes change, and a pass looks at all of them.
type nhcDispatcher struct {
	// nodes is the cluster-side cache the checks list nodes from.
	nodes client.Reader

	mu     sync.RWMutex
	checks map[string]nhcCheck
}

type nhcCheck struct {
	selector labels.Selector
	ctrl     *nhc.Controller
}

var _ reconcile.Reconciler = &nhcDispatcher{}

func (d *nhcDispatcher) add(name string, selector labels.Selector, c *nhc.Controller) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.checks == nil {
		d.checks = map[string]nhcCheck{}
	}
	d.checks[name] = nhcCheck{selector: selector, ctrl: c}
}

// enqueue queues the checks whose selector matches node, or every check
// for nil (a deleted node).
func (d *nhcDispatcher) enqueue(node client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for name, c := range d.checks {
		if node == nil || c.selector.Matches(labels.Set(node.GetLabels())) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
		}
	}
}

func (d *nhcDispatcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	d.mu.RLock()
	c, ok := d.checks[req.Name]
	d.mu.RUnlock()
	if !ok {
		return reconcile.Result{}, nil
	}
	return c.ctrl.Reconcile(ctx, req)
}
