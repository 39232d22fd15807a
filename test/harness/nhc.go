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
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/far"
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
	// PrePull is the template's spec.prePull.
	PrePull s3gwv1alpha1.PrePullSpec
	// UnhealthyDuration is how long a node must be NotReady before a CR is
	// created; zero means Env.UnhealthyDuration.
	UnhealthyDuration time.Duration
	// FirstSteps, if set, make the NodeHealthCheck escalating: these steps
	// (e.g. a FAR template from CreateFARTemplate, NHC's webhook wants each
	// timeout at least a minute) run first, and the S3GW template is the
	// last step, with StepTimeout.
	FirstSteps []nhc.Step
	// StepTimeout is the S3GW step's timeout in an escalation; zero means
	// 10 minutes.
	StepTimeout time.Duration
	// LeaseTimeout is NHC's classic remediation duration, which its node
	// lease lasts (plus a minute) and whose triple after the lease was
	// acquired times the CR out; zero means NHC's 10 minutes. A test that
	// wants NHC's lease-overdue time-out shortens it.
	LeaseTimeout time.Duration
	// HealthyDelay is spec.healthyDelay: how long NHC keeps the CRs of a
	// node that is healthy again (negative: until it is confirmed by hand).
	HealthyDelay *time.Duration
}

// startClusterSide runs the NodeHealthCheck emulators and the FAR stand-in
// in a manager of their own, as they would run outside the operator.
func (e *Env) startClusterSide(ctx context.Context) error {
	mgr, err := newManager(e.Cluster.RESTConfig(), e.log.WithName("cluster-side"))
	if err != nil {
		return err
	}
	e.nhc = &nhcDispatcher{nodes: mgr.GetClient(), cache: mgr.GetCache(), watched: map[schema.GroupVersionKind]bool{},
		added: make(chan event.GenericEvent, 16)}
	if e.nhc.reads, err = newNHCCache(e.Cluster.RESTConfig()); err != nil {
		return err
	}
	if err := mgr.Add(e.nhc.reads); err != nil {
		return fmt.Errorf("running the NodeHealthCheck emulators' cache: %w", err)
	}
	e.nhc.controller, err = ctrl.NewControllerManagedBy(mgr).Named("nhc-emulators").
		// NHC reconciles a NodeHealthCheck when it is created: the channel
		// says when its emulator is ready for that first pass.
		WatchesRawSource(source.Channel(e.nhc.added, handler.EnqueueRequestsFromMapFunc(byName))).
		Watches(nhc.NodeHealthCheckObject(), handler.EnqueueRequestsFromMapFunc(byName),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(e.nhc.forNode),
			builder.WithPredicates(nhc.NodePredicate(e.nhc.selectors))).
		Build(e.nhc)
	if err != nil {
		return fmt.Errorf("setting up the NodeHealthCheck emulators: %w", err)
	}
	if e.powerDir, err = os.MkdirTemp("", "fence-dummy-"); err != nil {
		return fmt.Errorf("creating fence_dummy's status directory: %w", err)
	}
	// FAR runs as FAR does: a manager of its own, as its ServiceAccount,
	// reading through its cache.
	farMgr, err := far.NewManager(e.Cluster.RESTConfig(), FARNamespace, e.log.WithName("far"))
	if err != nil {
		return err
	}
	e.far = &far.Controller{Client: farMgr.GetClient(), Power: e.power}
	if err := e.far.SetupWithManager(farMgr); err != nil {
		return fmt.Errorf("setting up the FAR stand-in: %w", err)
	}
	if e.farRunner, err = run(ctx, farMgr); err != nil {
		return err
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

// nhcConfig acts as NodeHealthCheck's service account, so that a verb
// missing from the operator's ext-remediation ClusterRole fails.
func nhcConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: NHCUser()}
	return cfg
}

// newNHCCache is the cache NHC's manager reads typed objects from
// (node-healthcheck-operator cmd/main.go: ctrl.NewManager's default client,
// only Namespaces uncached): Nodes, and through medik8s/common's lease
// manager the node Leases. NHC's cache watches every Lease in the cluster;
// this one only its own namespace, the only one it reads, so that a
// thousand kubelet renewals every 10 s do not load the benchmarks.
func newNHCCache(cfg *rest.Config) (cache.Cache, error) {
	c, err := cache.New(nhcConfig(cfg), cache.Options{Scheme: Scheme(), ByObject: map[client.Object]cache.ByObject{
		&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{nhc.LeaseNamespace: {}}},
	}})
	if err != nil {
		return nil, fmt.Errorf("creating the NodeHealthCheck emulators' cache: %w", err)
	}
	return c, nil
}

// nhcClient is NHC's client: writes, Namespaces and (unstructured) remediation
// CRs go to the API server, as controller-runtime does for a manager without
// CacheOptions.Unstructured; Nodes and Leases are read from the cache. Each
// pass of a NodeHealthCheck handles every healthy node (NHC's
// HandleHealthyNode: list its CRs, read the node, invalidate its lease), so
// at a thousand nodes a client reading everything from the API server makes
// a pass minutes long where NHC's takes seconds.
func (e *Env) nhcClient() (client.Client, error) {
	opts := client.Options{Scheme: Scheme()}
	if e.nhc != nil {
		opts.Cache = &client.CacheOptions{Reader: e.nhc.reads, DisableFor: []client.Object{&corev1.Namespace{}}}
	}
	c, err := client.New(nhcConfig(e.Cluster.RESTConfig()), opts)
	if err != nil {
		return nil, fmt.Errorf("creating the NodeHealthCheck client: %w", err)
	}
	return c, nil
}

// EnableRemediation creates the template and a NodeHealthCheck that
// references it and, unless NHC is external, starts emulating that
// NodeHealthCheck (woken as NHC is, by node events and by events of its
// templates and CRs). It returns the emulator (nil with an external NHC).
func (e *Env) EnableRemediation(ctx context.Context, r Remediation) (*nhc.Emulator, error) {
	ours, err := e.createS3GWTemplate(ctx, r.Name, s3gwv1alpha1.S3GWRemediationTemplateSpec{
		Template: s3gwv1alpha1.S3GWRemediationTemplateResource{Spec: r.Spec}, PrePull: r.PrePull})
	if err != nil {
		return nil, err
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
		Selector:          metav1.LabelSelector{MatchLabels: r.NodeSelector},
		MinHealthy:        ptr.To(intstr.FromString("0%")),
		UnhealthyDuration: duration,
		Timeout:           r.LeaseTimeout,
		HealthyDelay:      r.HealthyDelay,
	}
	if e.opts.ShippedNodeHealthCheck {
		if err := shipped(em, r.NodeSelector, cmp.Or(r.UnhealthyDuration, e.opts.UnhealthyDuration)); err != nil {
			return nil, err
		}
	}
	if len(r.FirstSteps) == 0 {
		em.Template = ours
	} else {
		last := slices.MaxFunc(r.FirstSteps, func(a, b nhc.Step) int { return a.Order - b.Order })
		em.Escalation = append(slices.Clone(r.FirstSteps), nhc.Step{Template: ours, Order: last.Order + 1,
			Timeout: cmp.Or(r.StepTimeout, 10*time.Minute)})
	}
	if err := em.CreateNodeHealthCheck(ctx, e.Client); err != nil {
		return nil, err
	}
	if e.opts.ExternalNHC {
		return nil, nil
	}
	if err := e.nhc.add(r.Name, em); err != nil {
		return nil, err
	}
	return em, nil
}

// CreateS3GWTemplate creates an S3GWRemediationTemplate in
// TemplateNamespace, for EnableRemediation or for a step of its
// Remediation.FirstSteps, and waits until the operator annotated it for
// multiple-templates support (NHC names CRs by it) before any node can fail.
func (e *Env) CreateS3GWTemplate(ctx context.Context, name string, spec s3gwv1alpha1.S3GWRemediationSpec) (nhc.TemplateRef, error) {
	return e.createS3GWTemplate(ctx, name, s3gwv1alpha1.S3GWRemediationTemplateSpec{
		Template: s3gwv1alpha1.S3GWRemediationTemplateResource{Spec: spec}})
}

func (e *Env) createS3GWTemplate(ctx context.Context, name string, spec s3gwv1alpha1.S3GWRemediationTemplateSpec) (nhc.TemplateRef, error) {
	template := &s3gwv1alpha1.S3GWRemediationTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: TemplateNamespace, Name: name},
		Spec:       spec,
	}
	ref := nhc.TemplateRef{APIVersion: s3gwv1alpha1.GroupVersion.String(), Kind: templateKind, Namespace: TemplateNamespace, Name: name}
	if err := e.Client.Create(ctx, template); err != nil {
		return ref, fmt.Errorf("creating S3GWRemediationTemplate %s: %w", name, err)
	}
	if e.opts.NoOperator {
		return ref, nil
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(template), template); err != nil {
			return false, err
		}
		_, ok := template.Annotations[annotations.MultipleTemplatesSupportedAnnotation]
		return ok, nil
	})
	if err != nil {
		return ref, fmt.Errorf("waiting for the operator to annotate S3GWRemediationTemplate %s: %w", name, err)
	}
	return ref, nil
}

// nhcDispatcher runs the emulated NodeHealthChecks. Like a real NHC, each
// keeps one queue entry (its own name) however many of its nodes change,
// and a pass looks at all of them.
type nhcDispatcher struct {
	// nodes is the cluster-side cache the checks list nodes from.
	nodes client.Reader
	// reads is the cache the checks' clients read typed objects from.
	reads      cache.Cache
	cache      cache.Cache
	controller controller.Controller

	// added receives each NodeHealthCheck once its emulator runs.
	added chan event.GenericEvent

	mu      sync.RWMutex
	checks  map[string]*nhc.Controller
	watched map[schema.GroupVersionKind]bool
}

// byName maps a NodeHealthCheck to its own queue entry.
func byName(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetName()}}}
}

var _ reconcile.Reconciler = &nhcDispatcher{}

// add starts emulating a NodeHealthCheck and, as NHC does once it uses a
// template, watches the template's kind and its remediation kind.
func (d *nhcDispatcher) add(name string, em *nhc.Emulator) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.checks == nil {
		d.checks = map[string]*nhc.Controller{}
	}
	d.checks[name] = &nhc.Controller{Emulator: em, Nodes: d.nodes}
	for _, gvk := range em.WatchedKinds() {
		if d.watched[gvk] {
			continue
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		src := source.Kind(d.cache, obj, handler.TypedEnqueueRequestsFromMapFunc(d.forObject),
			predicate.TypedFuncs[*unstructured.Unstructured]{
				CreateFunc:  func(event.TypedCreateEvent[*unstructured.Unstructured]) bool { return false },
				GenericFunc: func(event.TypedGenericEvent[*unstructured.Unstructured]) bool { return false },
			})
		if err := d.controller.Watch(src); err != nil {
			return fmt.Errorf("watching %s for the NodeHealthCheck emulators: %w", gvk.Kind, err)
		}
		d.watched[gvk] = true
	}
	nhcObj := nhc.NodeHealthCheckObject()
	nhcObj.SetName(name)
	d.added <- event.GenericEvent{Object: nhcObj}
	return nil
}

// selectors are every emulated NodeHealthCheck's selector, for NHC's node
// predicate.
func (d *nhcDispatcher) selectors() []metav1.LabelSelector {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]metav1.LabelSelector, 0, len(d.checks))
	for _, c := range d.checks {
		out = append(out, c.Emulator.Selector)
	}
	return out
}

// forNode is NHC's NHCByNodeMapperFunc: the checks whose selector matches
// the node, or every check once the node is gone.
func (d *nhcDispatcher) forNode(ctx context.Context, obj client.Object) []reconcile.Request {
	node := &corev1.Node{}
	gone := apierrors.IsNotFound(d.nodes.Get(ctx, client.ObjectKeyFromObject(obj), node))
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []reconcile.Request
	for name, c := range d.checks {
		selector, err := metav1.LabelSelectorAsSelector(&c.Emulator.Selector)
		if err != nil {
			continue
		}
		if gone || selector.Matches(labels.Set(node.Labels)) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
		}
	}
	return out
}

// forObject maps a template or CR event to the checks it wakes.
func (d *nhcDispatcher) forObject(_ context.Context, obj *unstructured.Unstructured) []reconcile.Request {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []reconcile.Request
	for name, c := range d.checks {
		if c.Emulator.WokenBy(obj) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
		}
	}
	return out
}

func (d *nhcDispatcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	d.mu.RLock()
	c, ok := d.checks[req.Name]
	d.mu.RUnlock()
	if !ok {
		return reconcile.Result{}, nil
	}
	return c.Reconcile(ctx, req)
}
