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
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
	"github.com/s3gw-tech/s3gw-remediation/internal/protection"
)

// Event reasons of image warmth, on the template, sent when a pod's
// warmth changes: a warning when it cannot heal by itself (a pull fails,
// no candidate node left) or when warm candidates turn cold (a new node,
// an upgrade rolling out); news when all are warm again. A gateway that
// starts cold (its pre-pull pods still pulling) is no news.
const (
	EventReplacementCold  = "S3GWReplacementCold"
	EventReplacementWarm  = "S3GWReplacementWarm"
	EventImagePullFailing = "S3GWImagePullFailing"
	EventNoCandidateNode  = "S3GWNoCandidateNode"
)

// warmthPass memoises, for one report pass, the nodes the candidates are
// chosen from.
type warmthPass struct {
	nodes []*corev1.Node
	read  bool
}

// NodeStore is the node informer's store, read in place: a pass reads
// every node once, and a list would copy each (784 bytes a node) while the
// pass runs.
type NodeStore interface{ List() []any }

// readNodes reads every node in place from Nodes. Read only: they are the
// cache's own.
func (r *Reconciler) readNodes() []*corev1.Node {
	objs := r.Nodes.List()
	nodes := make([]*corev1.Node, 0, len(objs))
	for _, obj := range objs {
		if node, ok := obj.(*corev1.Node); ok {
			nodes = append(nodes, node)
		}
	}
	return nodes
}

// observeWarmth reads how warm the candidate nodes of a pod's gateway are:
// the nodes (cache, once per pass) and the gateway's pre-pull pods (the
// pre-pull cache, by their DaemonSet's name). Nil when the template does
// not pre-pull, or nothing would replace the pod.
func (r *Reconciler) observeWarmth(ctx context.Context, p *protectionPass, pod *corev1.Pod) (*s3gwv1alpha1.ImageWarmth, error) {
	if !p.t.Spec.PrePull.Enabled || r.PrePull == nil || r.Nodes == nil {
		return nil, nil
	}
	gw, ok := prepull.GatewayOf(pod)
	if !ok {
		return nil, nil
	}
	if !p.warmth.read {
		p.warmth.nodes, p.warmth.read = r.readNodes(), true
	}
	pods := &corev1.PodList{}
	// Read only: Assess reads their status.
	if err := r.PrePull.List(ctx, pods, client.InNamespace(pod.Namespace),
		client.MatchingFields{prepull.DaemonSetIndex: gw.DaemonSetName()}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the pre-pull pods of %s: %w", gw, err)
	}
	w := prepull.Assess(pod, prepull.Candidates(pod, p.warmth.nodes), pods.Items)
	return &w, nil
}

func (r *Reconciler) imagePullEstimate() time.Duration {
	if r.ImagePullEstimate > 0 {
		return r.ImagePullEstimate
	}
	return protection.DefaultImagePullEstimate
}

// watchPrePull wakes the reports of the templates that pre-pull when a
// pre-pull pod comes, goes or changes state (pulled, failing), and when a
// pre-pull DaemonSet is written (the gateway's images changed: its pods
// are outdated until the rollout replaces them).
func (r *Reconciler) watchPrePull(c controller.Controller) error {
	if r.PrePull == nil {
		return nil
	}
	if err := c.Watch(source.Kind(r.PrePull, &corev1.Pod{},
		handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.Pod) []reconcile.Request {
			return r.prePullTemplates(ctx)
		}), prePullPodChanged)); err != nil {
		return err
	}
	return c.Watch(source.Kind(r.PrePull, &appsv1.DaemonSet{},
		handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *appsv1.DaemonSet) []reconcile.Request {
			return r.prePullTemplates(ctx)
		}), predicate.TypedAnnotationChangedPredicate[*appsv1.DaemonSet]{}))
}

// prePullTemplates are the templates with spec.prePull.enabled.
func (r *Reconciler) prePullTemplates(ctx context.Context) []reconcile.Request {
	return r.templatesMatching(ctx, func(t *s3gwv1alpha1.S3GWRemediationTemplate) bool { return t.Spec.PrePull.Enabled })
}

// prePullPodChanged passes pre-pull pods coming and going, and updates of
// their node, images or state.
var prePullPodChanged = predicate.TypedFuncs[*corev1.Pod]{
	CreateFunc:  func(event.TypedCreateEvent[*corev1.Pod]) bool { return true },
	DeleteFunc:  func(event.TypedDeleteEvent[*corev1.Pod]) bool { return true },
	GenericFunc: func(event.TypedGenericEvent[*corev1.Pod]) bool { return true },
	UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Pod]) bool {
		return e.ObjectOld.Spec.NodeName != e.ObjectNew.Spec.NodeName ||
			!maps.Equal(e.ObjectOld.Annotations, e.ObjectNew.Annotations) ||
			(e.ObjectOld.DeletionTimestamp == nil) != (e.ObjectNew.DeletionTimestamp == nil) ||
			!equality.Semantic.DeepEqual(e.ObjectOld.Status, e.ObjectNew.Status)
	},
}

// recordWarmth exports each reported pod's warmth.
func (r *Reconciler) recordWarmth(key types.NamespacedName, pods []s3gwv1alpha1.PodProtection) {
	out := make([]metrics.PodWarmth, 0, len(pods))
	for _, p := range pods {
		if p.Images != nil {
			out = append(out, metrics.PodWarmth{Namespace: p.Namespace, Pod: p.Name, Node: p.Node, Reason: p.Images.Reason,
				Candidates: p.Images.CandidateNodes, Warm: p.Images.WarmNodes})
		}
	}
	r.Metrics.SetWarmth(key, out)
}

// emitWarmthTransitions tells, per pod, when its candidates' warmth changed
// in a way people act on.
func (r *Reconciler) emitWarmthTransitions(old, updated *s3gwv1alpha1.S3GWRemediationTemplate) {
	before := map[string]*s3gwv1alpha1.ImageWarmth{}
	for _, p := range old.Status.Pods {
		before[p.Namespace+"/"+p.Name] = p.Images
	}
	for _, p := range updated.Status.Pods {
		now, prev := p.Images, before[p.Namespace+"/"+p.Name]
		if now == nil || (prev != nil && prev.Reason == now.Reason) {
			continue
		}
		switch now.Reason {
		case s3gwv1alpha1.ReasonImagePullFailing:
			r.Recorder.Eventf(updated, corev1.EventTypeWarning, EventImagePullFailing,
				"s3gw pod %s/%s: %s", p.Namespace, p.Name, now.Message)
		case s3gwv1alpha1.ReasonNoCandidateNode:
			r.Recorder.Eventf(updated, corev1.EventTypeWarning, EventNoCandidateNode,
				"s3gw pod %s/%s: %s", p.Namespace, p.Name, now.Message)
		case s3gwv1alpha1.ReasonSomeCandidatesCold, s3gwv1alpha1.ReasonAllCandidatesCold:
			if prev != nil && prev.Reason == s3gwv1alpha1.ReasonAllCandidatesWarm {
				r.Recorder.Eventf(updated, corev1.EventTypeWarning, EventReplacementCold,
					"s3gw pod %s/%s would pull its images on some nodes its replacement may be scheduled to: %s", p.Namespace, p.Name, now.Message)
			}
		case s3gwv1alpha1.ReasonAllCandidatesWarm:
			if prev != nil {
				r.Recorder.Eventf(updated, corev1.EventTypeNormal, EventReplacementWarm,
					"s3gw pod %s/%s: %s", p.Namespace, p.Name, now.Message)
			}
		}
	}
}
