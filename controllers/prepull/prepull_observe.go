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

package prepull

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// gatewayPods is one gateway, the pods of it the templates select and the
// templates that select them.
type gatewayPods struct {
	gateway prepull.Gateway
	pods    []*corev1.Pod
	// templates select the gateway, in namespace/name order: the first
	// one's spec.prePull is the DaemonSet's.
	templates []*s3gwv1alpha1.S3GWRemediationTemplate
}

// observation is what one pass read.
type observation struct {
	// gateways by their DaemonSet's namespace and name.
	gateways map[types.NamespacedName]*gatewayPods
	// existing are the pre-pull DaemonSets, as cached (metadata only):
	// the cache's own objects, read only.
	existing []*appsv1.DaemonSet
	// uncached is true when an enabled template's pods were read uncached.
	uncached bool
	// enabled are the templates with spec.prePull.enabled, namespace/name.
	enabled map[string]bool
}

// observe reads the enabled templates (cache), the pods each selects (the
// pod cache when it covers the template, else uncached), and the existing
// pre-pull DaemonSets (the pre-pull cache). It reads only.
func (r *Reconciler) observe(ctx context.Context) (*observation, error) {
	o := &observation{gateways: map[types.NamespacedName]*gatewayPods{}, enabled: map[string]bool{}}
	templates := &s3gwv1alpha1.S3GWRemediationTemplateList{}
	// Read only: a template's status holds the report of every pod it
	// selects, and every pass lists them all.
	if err := r.Client.List(ctx, templates, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing S3GWRemediationTemplates: %w", err)
	}
	slices.SortFunc(templates.Items, func(a, b s3gwv1alpha1.S3GWRemediationTemplate) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for i := range templates.Items {
		t := &templates.Items[i]
		if !t.Spec.PrePull.Enabled || t.DeletionTimestamp != nil {
			continue
		}
		o.enabled[t.Namespace+"/"+t.Name] = true
		if err := r.observeTemplate(ctx, o, t); err != nil {
			return nil, err
		}
	}
	list := &appsv1.DaemonSetList{}
	// Read only: a plan copies the DaemonSets it deletes.
	if err := r.PrePull.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pre-pull DaemonSets: %w", err)
	}
	for i := range list.Items {
		if ds := &list.Items[i]; ds.Labels[managedByLabel] == managedBy {
			o.existing = append(o.existing, ds)
		}
	}
	return o, nil
}

// managedBy is managedByLabel's value on the DaemonSets the operator wrote:
// it deletes no other.
const managedBy = "s3gw-remediation"

// observeTemplate adds the gateways of the pods a template selects.
func (r *Reconciler) observeTemplate(ctx context.Context, o *observation, t *s3gwv1alpha1.S3GWRemediationTemplate) error {
	spec := t.Spec.Template.Spec
	var reader client.Reader = r.Client
	if !workloads.Covered(spec, r.WorkloadCache) {
		reader, o.uncached = r.APIReader, true
	}
	pods, err := workloads.List(ctx, reader, spec, "")
	if invalid := (*workloads.InvalidSelectorError)(nil); errors.As(err, &invalid) {
		// The protection report says so; nothing to pre-pull.
		logf.FromContext(ctx).V(1).Info("Skipping a template whose selector does not parse", "template", client.ObjectKeyFromObject(t))
		return nil
	}
	if err != nil {
		return err
	}
	for i := range pods {
		pod := &pods[i]
		if workloads.Protected(pod, spec.Release.LonghornNamespaceOrDefault()) != "" {
			continue
		}
		gw, ok := prepull.GatewayOf(pod)
		if !ok {
			continue
		}
		key := types.NamespacedName{Namespace: gw.Namespace, Name: gw.DaemonSetName()}
		g := o.gateways[key]
		if g == nil {
			g = &gatewayPods{gateway: gw}
			o.gateways[key] = g
		}
		if !slices.ContainsFunc(g.pods, func(p *corev1.Pod) bool { return p.UID == pod.UID }) {
			g.pods = append(g.pods, pod)
		}
		if !slices.Contains(g.templates, t) {
			g.templates = append(g.templates, t)
		}
	}
	return nil
}

// desired is each gateway's DaemonSet, built from its Home pod (or its
// hash remembered in hashes, when nothing it is built from changed); keep
// names the DaemonSets of gateways without one (between pods), left as
// they are. hashes forgets the other gateways.
func (o *observation) desired(programImage string, hashes *prepull.SpecHashes) ([]prepull.Desired, map[types.NamespacedName]bool) {
	out := make([]prepull.Desired, 0, len(o.gateways))
	keep := map[types.NamespacedName]bool{}
	for key, g := range o.gateways {
		home := prepull.Home(g.pods)
		if home == nil {
			keep[key] = true
			continue
		}
		// The gateway's current controller owns the DaemonSet: a rollout's
		// new ReplicaSet takes over from the old one.
		gw, _ := prepull.GatewayOf(home)
		in := prepull.Input{Gateway: gw, Pod: home, Spec: g.templates[0].Spec.PrePull, ProgramImage: programImage,
			Templates: make([]string, 0, len(g.templates))}
		for _, t := range g.templates {
			in.Templates = append(in.Templates, t.Namespace+"/"+t.Name)
		}
		out = append(out, hashes.Desired(in))
	}
	hashes.Retain(func(key types.NamespacedName) bool { return o.gateways[key] != nil && !keep[key] })
	return out, keep
}
