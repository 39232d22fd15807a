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
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// instanceManagerNodeIndex names the informer index of instance managers
// by spec.nodeID.
const instanceManagerNodeIndex = "s3gw-remediation.medik8s.io/instance-manager-node"

// InstanceManagerIndex indexes the manager cache's Longhorn instance
// managers by node, so a pass reads a replica node's in one lookup, in
// place: the cache answers a label selector by scanning every instance
// manager in the namespace and copying the matches into a list, and the
// protection report did that for each replica node of each gateway on every
// pass (a fifth of all the manager allocated at 3 000 nodes). It is added
// to the kind's informer on the first read, once Longhorn is served: the
// informer cannot start before, and clusters without Longhorn have none.
// It is the informer's own index, one entry per instance manager keyed by
// the node name it already holds; controller-runtime's field indexes keep
// two, each a new string.
type InstanceManagerIndex struct {
	informers cache.Informers

	mu     sync.Mutex
	byNode toolscache.Indexer
}

// NewInstanceManagerIndex returns the index of the instance managers in
// informers (the manager's cache); it adds nothing yet.
func NewInstanceManagerIndex(informers cache.Informers) *InstanceManagerIndex {
	return &InstanceManagerIndex{informers: informers}
}

// on reads the instance managers of node in namespace through the index,
// adding it to the kind's informer unless it has it (safe to repeat: an
// informer keeps its indexes); false without an index (nil) or while the
// kind is not served. Read only: they are the cache's own objects.
func (x *InstanceManagerIndex) on(ctx context.Context, namespace, node string) ([]*longhorn.InstanceManager, bool, error) {
	if x == nil {
		return nil, false, nil
	}
	store, err := x.store(ctx)
	if err != nil || store == nil {
		return nil, false, err
	}
	objs, err := store.ByIndex(instanceManagerNodeIndex, node)
	if err != nil {
		return nil, false, fmt.Errorf("reading the Longhorn instance managers of node %s: %w", node, err)
	}
	ims := make([]*longhorn.InstanceManager, 0, len(objs))
	for _, obj := range objs {
		if im, ok := obj.(*longhorn.InstanceManager); ok && im.Namespace == namespace {
			ims = append(ims, im)
		}
	}
	return ims, true, nil
}

// store returns the informer's store once it has the index; nil while the
// kind is not served.
func (x *InstanceManagerIndex) store(ctx context.Context) (toolscache.Indexer, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byNode != nil {
		return x.byNode, nil
	}
	informer, err := x.informers.GetInformer(ctx, &longhorn.InstanceManager{})
	switch {
	case meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting the Longhorn instance manager informer: %w", err)
	}
	shared, ok := informer.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the Longhorn instance manager informer (%T) has no store to index", informer)
	}
	if _, indexed := shared.GetIndexer().GetIndexers()[instanceManagerNodeIndex]; !indexed {
		if err := informer.AddIndexers(toolscache.Indexers{instanceManagerNodeIndex: instanceManagerNode}); err != nil {
			return nil, fmt.Errorf("indexing the Longhorn instance managers by node: %w", err)
		}
	}
	x.byNode = shared.GetIndexer()
	return x.byNode, nil
}

// instanceManagerNode is an instance manager's key in the index: its node.
func instanceManagerNode(obj any) ([]string, error) {
	if im, ok := obj.(*longhorn.InstanceManager); ok && im.Spec.NodeID != "" {
		return []string{im.Spec.NodeID}, nil
	}
	return nil, nil
}

// instanceManagersOn reads the instance managers of a node: those whose
// spec.nodeID names it. longhorn-manager lists a node's by its
// longhorn.io/node label, which its admission webhook sets from
// spec.nodeID when one is created (webhook/resources/instancemanager
// mutator.go instanceManagerMutator.Create, types/types.go
// GetInstanceManagerLabels): the same ones. Without the kind (a Longhorn
// too old to have it) there are none: no replica stop on the node is
// confirmed, and the release waits.
func (p *Pass) instanceManagersOn(ctx context.Context, node string) ([]failover.InstanceManager, error) {
	ims, indexed, err := p.imsByNode.on(ctx, p.Longhorn.Namespace, node)
	if err != nil {
		return nil, err
	}
	if !indexed {
		// No index (an uncached reader, as in step-by-step tests): few
		// enough to scan.
		list := &longhorn.InstanceManagerList{}
		err := p.Longhorn.Reader.List(ctx, list, client.InNamespace(p.Longhorn.Namespace), client.UnsafeDisableDeepCopy)
		if err != nil && !meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("listing the Longhorn instance managers of node %s: %w", node, err)
		}
		for i := range list.Items {
			if im := &list.Items[i]; im.Spec.NodeID == node {
				ims = append(ims, im)
			}
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
