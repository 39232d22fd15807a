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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// EnableReleaseAtNotReady has a releaser free the nodes the selector
// matches the moment they are not Ready: it force-deletes their pods and
// empties their status.volumesInUse, so that the ReplicaSet controller
// replaces the pods and the attach-detach controller moves their volumes
// at once. Nothing is checked and nothing waits in between, so NotReady →
// attach → Ready is all that is left: the physical floor of any
// remediation, a benchmark's anchor. It is never safe (NotReady proves
// nothing), so nothing else may rely on it. It needs the cluster side.
func (e *Env) EnableReleaseAtNotReady(selector map[string]string) error {
	if e.floorReleaser == nil {
		return errors.New("the release at NotReady runs with the emulated NodeHealthCheck only")
	}
	e.floorReleaser.add(labels.SelectorFromSet(selector))
	return nil
}

// floorReleaser is the release at NotReady.
type floorReleaser struct {
	client client.Client
	nodes  client.Reader
	nodeSelectors
}

var _ reconcile.Reconciler = &floorReleaser{}

func (f *floorReleaser) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := f.nodes.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if ready := readyCondition(node); !f.selects(node) || ready == nil || ready.Status == corev1.ConditionTrue {
		return reconcile.Result{}, nil
	}
	// The admin client reads the API, not a cache: a pod deleted once is
	// not deleted again.
	pods := &corev1.PodList{}
	if err := f.client.List(ctx, pods, client.MatchingFields{"spec.nodeName": node.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the pods of node %s: %w", node.Name, err)
	}
	for i := range pods.Items {
		if err := f.client.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("force-deleting pod %s: %w", client.ObjectKeyFromObject(&pods.Items[i]), err)
		}
	}
	if len(node.Status.VolumesInUse) == 0 {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFromWithOptions(node.DeepCopy(), client.MergeFromWithOptimisticLock{})
	node.Status.VolumesInUse = nil
	if err := f.client.Status().Patch(ctx, node, patch); err != nil {
		return reconcile.Result{}, fmt.Errorf("emptying status.volumesInUse of node %s: %w", node.Name, err)
	}
	return reconcile.Result{}, nil
}
