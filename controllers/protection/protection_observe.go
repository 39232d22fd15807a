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

package protection

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/protection"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// protectionPass is what one report pass read, memoised per node.
type protectionPass struct {
	t       *s3gwv1alpha1.S3GWRemediationTemplate
	spec    s3gwv1alpha1.S3GWRemediationSpec
	storage *storage.Pass
	in      protection.Inputs
	// evidence is, per node, what the evidence adapters previewed.
	evidence map[string]failover.Evidence
	// warmth is what the pass read for the pods' image warmth.
	warmth warmthPass
}

// observe reads what the report needs: the NodeHealthChecks that
// reference the template, the pods it selects (with the remediation's own
// workloads.List and workloads.Protected), their volumes and replicas as a
// remediation of their node would see them, and whether each evidence
// source could prove anything there.
func (r *Reconciler) observe(ctx context.Context, t *s3gwv1alpha1.S3GWRemediationTemplate) (protection.Inputs, []protection.Pod, error) {
	spec := t.Spec.Template.Spec
	now := r.Clock.Now()
	p := &protectionPass{t: t, spec: spec, evidence: map[string]failover.Evidence{},
		storage: storage.Observer{Client: r.Client, APIReader: r.APIReader, WorkloadCache: r.WorkloadCache,
			Leases: r.Leases, InstanceManagers: r.InstanceManagers, Fencers: fencing.NodeFencers(r.Client)}.Pass(spec, now)}
	p.in = protection.Inputs{Now: now, Spec: spec, NodeMonitorGracePeriod: r.nodeMonitorGracePeriod(),
		PrePull: t.Spec.PrePull.Enabled, ImagePullEstimate: r.imagePullEstimate()}
	var err error
	key := types.NamespacedName{Namespace: t.Namespace, Name: t.Name}
	if p.in.HealthChecksInstalled, p.in.HealthChecks, err = r.healthChecks(ctx, key); err != nil {
		return p.in, nil, err
	}

	pods, err := workloads.List(ctx, p.storage.Pods(), spec, "")
	var invalid *workloads.InvalidSelectorError
	switch {
	case errors.As(err, &invalid):
		p.in.SelectorError = invalid.Error()
		return p.in, nil, nil
	case err != nil:
		return p.in, nil, err
	}
	if err := p.storage.ReadLonghorn(ctx); err != nil {
		return p.in, nil, err
	}
	p.in.LonghornAvailable = p.storage.LonghornAvailable
	if p.in.LonghornAvailable {
		r.watchLonghorn(ctx)
		if p.in.AutoSalvage, err = p.storage.Longhorn.AutoSalvage(ctx); err != nil {
			return p.in, nil, err
		}
	}
	for _, gvk := range fencing.PreviewWatched(spec.Fencing) {
		r.watchPreviewed(ctx, gvk)
	}

	var out []protection.Pod
	for i := range pods {
		pod := &pods[i]
		if !onNode(pod) || workloads.Protected(pod, p.storage.Longhorn.Namespace) != "" {
			continue
		}
		observed, err := r.observePod(ctx, p, pod)
		if err != nil {
			return p.in, nil, err
		}
		out = append(out, observed)
	}
	return p.in, out, nil
}

// onNode reports whether the pod runs (or is about to) on a node: pods
// not scheduled yet, being deleted or finished have no node to lose.
func onNode(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// observePod reads one pod the way a remediation of its node would: its
// volumes (workloads.Volumes), each Longhorn volume's replicas and whether
// longhorn-manager reaches their nodes now, and its node's labels.
func (r *Reconciler) observePod(ctx context.Context, p *protectionPass, pod *corev1.Pod) (protection.Pod, error) {
	out := protection.Pod{Node: pod.Spec.NodeName,
		Target: failover.Target{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, Finalizers: pod.Finalizers}}
	node := &corev1.Node{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); {
	case err == nil:
		out.NodeLabels = node.Labels
	case !apierrors.IsNotFound(err):
		return out, fmt.Errorf("getting node %s: %w", pod.Spec.NodeName, err)
	}
	volumes, err := workloads.Volumes(ctx, r.Client, pod)
	if err != nil {
		return out, err
	}
	for _, tv := range volumes {
		v, err := p.storage.Volume(ctx, tv, pod.Spec.NodeName)
		if err != nil {
			return out, err
		}
		out.Target.Volumes = append(out.Target.Volumes, v)
	}
	if out.Evidence, err = r.previewEvidence(ctx, p, pod.Spec.NodeName); err != nil {
		return out, err
	}
	out.Images, err = r.observeWarmth(ctx, p, pod)
	return out, err
}

// previewEvidence reads, once per node, whether each evidence source could
// prove anything for a remediation of the node (fencing.Preview): a listed
// remediator's kind served, the delegate creatable.
func (r *Reconciler) previewEvidence(ctx context.Context, p *protectionPass, node string) (failover.Evidence, error) {
	if e, done := p.evidence[node]; done {
		return e, nil
	}
	// A remediation that does not exist yet: no UID, so it owns nothing.
	rem := &s3gwv1alpha1.S3GWRemediation{ObjectMeta: metav1.ObjectMeta{Namespace: p.t.Namespace}, Spec: p.spec}
	in := fencing.Input{Client: r.Client, Delegate: fencing.Delegate{Client: r.Client, Live: r.APIReader},
		Storage: p.storage, Remediation: rem, Node: node}
	var e failover.Evidence
	if err := fencing.Preview(ctx, in, &e); err != nil {
		return e, err
	}
	p.evidence[node] = e
	return e, nil
}

// served reports whether the API server serves a kind.
func (r *Reconciler) served(gvk schema.GroupVersionKind) bool {
	_, err := r.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// healthChecks lists (from the cache) the NodeHealthChecks that reference
// the template; installed is false when NodeHealthCheck is not served.
func (r *Reconciler) healthChecks(ctx context.Context, template types.NamespacedName) (installed bool, out []protection.HealthCheck, err error) {
	if !r.served(protection.NodeHealthCheckGVK) {
		return false, nil, nil
	}
	r.watchHealthChecks(ctx)
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(protection.NodeHealthCheckGVK.GroupVersion().WithKind(protection.NodeHealthCheckGVK.Kind + "List"))
	if err := r.Client.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return false, nil, nil
		}
		return false, nil, fmt.Errorf("listing NodeHealthChecks: %w", err)
	}
	for i := range list.Items {
		h, referenced, err := protection.ReferencingHealthCheck(&list.Items[i], template)
		if err != nil {
			// NHC's own admission rejects such a spec; one that got in
			// anyway remediates nothing.
			logf.FromContext(ctx).Error(err, "Ignoring a NodeHealthCheck that cannot be read", "nodeHealthCheck", list.Items[i].GetName())
			continue
		}
		if referenced {
			out = append(out, h)
		}
	}
	return true, out, nil
}
