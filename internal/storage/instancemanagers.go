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

package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// InstanceManagerNodeField is the cache index of Longhorn instance managers
// by spec.nodeID.
const InstanceManagerNodeField = "spec.nodeID"

// InstanceManagerIndex indexes the manager cache's Longhorn instance
// managers by node, so a pass reads a replica node's in one lookup: the
// cache answers a label selector by scanning every instance manager in the
// namespace, and the protection report did that for each replica node of
// each gateway on every pass (a fifth of all the manager allocated at
// 3 000 nodes). It is registered on the first read, once Longhorn is
// served: the kind's informer cannot start before, and clusters without
// Longhorn have none. One index serves both reconcilers of a manager.
type InstanceManagerIndex struct {
	indexer client.FieldIndexer

	mu      sync.Mutex
	indexed bool
}

// NewInstanceManagerIndex returns the index of indexer's (the manager
// cache's) instance managers; it registers nothing yet.
func NewInstanceManagerIndex(indexer client.FieldIndexer) *InstanceManagerIndex {
	return &InstanceManagerIndex{indexer: indexer}
}

// ensure registers the index unless it is registered; false without an
// index (nil) or while the kind is not served.
func (x *InstanceManagerIndex) ensure(ctx context.Context) (bool, error) {
	if x == nil {
		return false, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.indexed {
		return true, nil
	}
	err := x.indexer.IndexField(ctx, &longhorn.InstanceManager{}, InstanceManagerNodeField, func(obj client.Object) []string {
		if im, ok := obj.(*longhorn.InstanceManager); ok && im.Spec.NodeID != "" {
			return []string{im.Spec.NodeID}
		}
		return nil
	})
	switch {
	case meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("indexing the Longhorn instance managers by node: %w", err)
	}
	x.indexed = true
	return true, nil
}

// instanceManagersOn reads the instance managers of a node: those whose
// spec.nodeID names it. longhorn-manager lists a node's by its
// longhorn.io/node label, which its admission webhook sets from
// spec.nodeID when one is created (webhook/resources/instancemanager
// mutator.go instanceManagerMutator.Create, types/types.go
// GetInstanceManagerLabels): the same ones. Read only: they are the cache's
// own objects. Without the kind (a Longhorn too old to have it) there are
// none: no replica stop on the node is confirmed, and the release waits.
func (p *Pass) instanceManagersOn(ctx context.Context, node string) ([]failover.InstanceManager, error) {
	indexed, err := p.imsByNode.ensure(ctx)
	if err != nil {
		return nil, err
	}
	opts := []client.ListOption{client.InNamespace(p.Longhorn.Namespace), client.UnsafeDisableDeepCopy}
	if indexed {
		opts = append(opts, client.MatchingFields{InstanceManagerNodeField: node})
	}
	list := &longhorn.InstanceManagerList{}
	if err := p.Longhorn.Reader.List(ctx, list, opts...); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("listing the Longhorn instance managers of node %s: %w", node, err)
	}
	ims := make([]*longhorn.InstanceManager, 0, len(list.Items))
	for i := range list.Items {
		if im := &list.Items[i]; im.Spec.NodeID == node {
			ims = append(ims, im)
		}
	}
	// By name, for messages that do not change with the cache's order.
	slices.SortFunc(ims, func(a, b *longhorn.InstanceManager) int { return strings.Compare(a.Name, b.Name) })
	return instanceManagersOf(ims), nil
}

// instanceManagersOf converts one node's instance managers for the decision.
func instanceManagersOf(ims []*longhorn.InstanceManager) []failover.InstanceManager {
	out := make([]failover.InstanceManager, 0, len(ims))
	for _, im := range ims {
		replicas := make(map[string]string, len(im.Status.InstanceReplicas))
		for name, process := range im.Status.InstanceReplicas {
			replicas[name] = process.Status.State
		}
		out = append(out, failover.InstanceManager{Name: im.Name, State: im.Status.CurrentState, Replicas: replicas})
	}
	return out
}
