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

package fencing

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/evidence"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// Input is what an evidence adapter reads with.
type Input struct {
	// Client reads through the manager's cache.
	Client client.Client
	// Delegate reads the delegate fencing CR.
	Delegate Delegate
	// Storage is the step's storage observer.
	Storage *storage.Pass
	// Remediation is the remediation observed; for the protection report,
	// one not created yet (no UID: it owns nothing).
	Remediation *s3gwv1alpha1.S3GWRemediation
	// Node is the node it remediates.
	Node string
}

// Adapter is the I/O of one evidence source (evidence.Source): what the API
// shows of it, the writes its actions make, and what is cleaned up after it
// when NodeHealthCheck deletes the remediation. A nil func does nothing.
type Adapter struct {
	// Observe reads what the source shows now for the remediation into e.
	Observe func(ctx context.Context, in Input, e *failover.Evidence) error
	// ObserveStarted reads only what the source's own actions created, for
	// a remediation NodeHealthCheck timed out: enough to pass the time-out
	// on (evidence.Source.TimedOut).
	ObserveStarted func(ctx context.Context, in Input, e *failover.Evidence) error
	// Watched are the kinds whose changes change what Observe reads; the
	// remediation watches them once they are served.
	Watched func(s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind
	// Preview reads, for the protection report, whether the source could
	// prove anything for a remediation of the node (installed, usable) into
	// e; evidence.Source.Imagine does the rest.
	Preview func(ctx context.Context, in Input, e *failover.Evidence) error
	// PreviewWatched are the kinds whose changes change what Preview reads.
	PreviewWatched func(s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind
	// Perform makes one of the source's actions (evidence.Source.Working,
	// TimedOut). It logs before it writes and is idempotent.
	Perform func(ctx context.Context, in Input, a failover.Action) (Done, error)
	// CleanUp deletes what the source's actions created for the
	// remediation; repeated, it finds what is left.
	CleanUp func(ctx context.Context, in Input) error
}

// Done is what an action made, for the remediation's memory and events.
type Done struct {
	// Created is the fencer's CR the action created; nil otherwise.
	Created *failover.RemediatorCR
	// Reason and Message are the event that announces it on the
	// remediation; no event without a reason. Warning marks a write that
	// could not be made for a reason a retry cannot cure.
	Reason, Message string
	Warning         bool
}

// Fencing evidence from medik8s remediators, read from watched caches; their
// CRs may also be created as delegate, patched with NHC's timed-out
// annotation, and deleted with ours. Other kinds listed in spec.fencing need
// a ClusterRole of their own with get, list and watch (docs/configuration.md).
// +kubebuilder:rbac:groups=fence-agents-remediation.medik8s.io,resources=fenceagentsremediations,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=fence-agents-remediation.medik8s.io,resources=fenceagentsremediationtemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=self-node-remediation.medik8s.io,resources=selfnoderemediations,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=self-node-remediation.medik8s.io,resources=selfnoderemediationtemplates,verbs=get;list;watch

// Adapters are the adapters of evidence.Sources, by source name.
var Adapters = map[string]Adapter{
	// The taint is on the node, which every step reads anyway.
	evidence.EvidenceOutOfServiceTaint: {},
	evidence.EvidenceStorageIsolation:  {Observe: observeIsolation},
	evidence.SourceRemediators: {Observe: observeRemediators, Preview: previewRemediators,
		Watched: func(f s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind { return RemediatorKinds(f.Remediators) }},
	evidence.SourceDelegate: {Observe: observeDelegate, ObserveStarted: observeOwnDelegate, Preview: previewDelegate,
		Perform: performDelegate, CleanUp: cleanUpDelegate,
		Watched:        func(f s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind { return delegateKinds(f, DelegateKind) },
		PreviewWatched: func(f s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind { return delegateKinds(f, TemplateKind) }},
}

// Observe reads every evidence source the spec enables, in the order the
// gate judges them; nothing in Disabled mode.
func Observe(ctx context.Context, in Input, e *failover.Evidence) error {
	return each(in.Remediation.Spec.Fencing, func(a Adapter) error {
		if a.Observe == nil {
			return nil
		}
		return a.Observe(ctx, in, e)
	})
}

// ObserveStarted reads what each enabled source's actions created.
func ObserveStarted(ctx context.Context, in Input, e *failover.Evidence) error {
	return each(in.Remediation.Spec.Fencing, func(a Adapter) error {
		if a.ObserveStarted == nil {
			return nil
		}
		return a.ObserveStarted(ctx, in, e)
	})
}

// Preview reads, for the protection report, whether each enabled source
// could prove anything for a remediation of in.Node.
func Preview(ctx context.Context, in Input, e *failover.Evidence) error {
	return each(in.Remediation.Spec.Fencing, func(a Adapter) error {
		if a.Preview == nil {
			return nil
		}
		return a.Preview(ctx, in, e)
	})
}

// Perform makes an action of the source that asked for it.
func Perform(ctx context.Context, in Input, a failover.Action) (Done, error) {
	adapter, ok := Adapters[a.Source]
	if !ok || adapter.Perform == nil {
		return Done{}, fmt.Errorf("evidence source %q has no adapter for %s", a.Source, a.Kind)
	}
	return adapter.Perform(ctx, in, a)
}

// CleanUp cleans up after every source the spec enables.
func CleanUp(ctx context.Context, in Input) error {
	return each(in.Remediation.Spec.Fencing, func(a Adapter) error {
		if a.CleanUp == nil {
			return nil
		}
		return a.CleanUp(ctx, in)
	})
}

// Watched are the kinds Observe reads of the enabled sources.
func Watched(f s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind {
	return kinds(f, func(a Adapter) func(s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind { return a.Watched })
}

// PreviewWatched are the kinds Preview reads of the enabled sources.
func PreviewWatched(f s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind {
	return kinds(f, func(a Adapter) func(s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind { return a.PreviewWatched })
}

func each(f s3gwv1alpha1.FencingSpec, do func(Adapter) error) error {
	if f.Mode == s3gwv1alpha1.FencingModeDisabled {
		return nil
	}
	for _, source := range evidence.Enabled(f) {
		if err := do(Adapters[source.Name]); err != nil {
			return err
		}
	}
	return nil
}

func kinds(f s3gwv1alpha1.FencingSpec, of func(Adapter) func(s3gwv1alpha1.FencingSpec) []schema.GroupVersionKind) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	_ = each(f, func(a Adapter) error {
		if watched := of(a); watched != nil {
			out = append(out, watched(f)...)
		}
		return nil
	})
	return out
}

// observeIsolation reads whether Longhorn reports the node down.
func observeIsolation(ctx context.Context, in Input, e *failover.Evidence) error {
	if !in.Storage.LonghornAvailable {
		return nil
	}
	lh, err := in.Storage.LonghornNode(ctx, in.Node)
	e.LonghornNode = lh
	return err
}

// observeRemediators reads the listed remediators' CRs for the node.
func observeRemediators(ctx context.Context, in Input, e *failover.Evidence) error {
	crs, invalid, err := Remediators(ctx, in.Client, in.Remediation.Spec.Fencing.Remediators, in.Node)
	e.Remediators, e.InvalidRemediators = crs, invalid
	return err
}

// previewRemediators says, by kind, why a listed remediator's CR could
// never prove anything: its apiVersion does not parse or its kind is not
// served.
func previewRemediators(_ context.Context, in Input, e *failover.Evidence) error {
	for _, l := range in.Remediation.Spec.Fencing.Remediators {
		why := ""
		gvk, err := Kind(l.APIVersion, l.Kind)
		switch {
		case err != nil:
			why = err.Error()
		case !served(in.Client, gvk):
			why = l.Kind + " is not installed"
		default:
			continue
		}
		if e.InvalidRemediators == nil {
			e.InvalidRemediators = map[string]string{}
		}
		e.InvalidRemediators[l.Kind] = why
	}
	return nil
}

// served reports whether the API server serves a kind.
func served(c client.Client, gvk schema.GroupVersionKind) bool {
	_, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// observeDelegate reads the delegate this remediation created, or the
// fencers it could reuse and whether it can be created.
func observeDelegate(ctx context.Context, in Input, e *failover.Evidence) error {
	state, err := in.Delegate.Observe(ctx, in.Remediation, in.Node)
	e.Delegate, e.OtherFencers, e.DelegateRef = state.Own, state.Others, state.Ref
	e.DelegateError, err = unusable(err)
	return err
}

// observeOwnDelegate reads the delegate's fencer CR this remediation
// created, if any: one that succeeded is not timed out
// (failover.RemediatorCR.MayTimeOut).
func observeOwnDelegate(ctx context.Context, in Input, e *failover.Evidence) error {
	state, err := in.Delegate.Observe(ctx, in.Remediation, in.Node)
	if _, err := unusable(err); err != nil {
		return err
	}
	e.Delegate, e.DelegateRef = state.Own, state.Ref
	return nil
}

// previewDelegate checks, as Observe does for a remediation, that a
// remediation of the node could create the delegate fencing CR: the kind is
// served, the template exists with spec.template.spec, the name is free.
func previewDelegate(ctx context.Context, in Input, e *failover.Evidence) error {
	_, err := in.Delegate.Observe(ctx, in.Remediation, in.Node)
	if apierrors.IsForbidden(err) {
		e.DelegateError = "the manager may not read the delegate's kind or template: " + err.Error()
		return nil
	}
	e.DelegateError, err = unusable(err)
	return err
}

// unusable tells a DelegateError, why the delegate cannot be used, from
// an error a retry may cure.
func unusable(err error) (string, error) {
	var invalid *DelegateError
	if errors.As(err, &invalid) {
		return invalid.Reason, nil
	}
	return "", err
}

func delegateKinds(f s3gwv1alpha1.FencingSpec, kind func(*s3gwv1alpha1.DelegateFencing) (schema.GroupVersionKind, error)) []schema.GroupVersionKind {
	if gvk, err := kind(f.Delegate); err == nil {
		return []schema.GroupVersionKind{gvk}
	}
	return nil
}
