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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// Observer reads storage for a reconciler.
type Observer struct {
	// Client reads from the manager's cache.
	Client client.Reader
	// APIReader reads uncached: the pods of a spec the cache does not hold.
	APIReader client.Reader
	// WorkloadCache is the label selector the manager caches pods by; nil
	// when every pod Client reads is in it.
	WorkloadCache labels.Selector
	// PodStore is the store of Client's pod informer, for the reads that
	// scan the cached pods in place (workloads.CachedPods); nil lists them.
	PodStore toolscache.Indexer
	// Leases times the kubelets' Lease renewals on this controller's
	// clock; nil leaves Heartbeat.Lagging to the kubelets' clocks.
	Leases *LeaseSightings
	// InstanceManagers indexes Client's Longhorn instance managers by
	// node; nil scans the namespace's for each node (an uncached Client).
	InstanceManagers *InstanceManagerIndex
	// Fencers reads the CRs of the fencing kinds a spec counts that
	// remediate a node (internal/fencing); nil reads none.
	Fencers Fencers
}

// Fencers reads, for a spec, the fencers' CRs for a node.
type Fencers func(ctx context.Context, spec s3gwv1alpha1.S3GWRemediationSpec, node string) ([]failover.RemediatorCR, error)

// Pass is what one reconcile pass reads for one spec at one time. It reads
// each replica's node once.
type Pass struct {
	// Longhorn reads Longhorn's CRs in the spec's Longhorn namespace.
	Longhorn longhorn.State
	// LonghornAvailable is what ReadLonghorn found.
	LonghornAvailable bool

	now       time.Time
	spec      s3gwv1alpha1.S3GWRemediationSpec
	pods      client.Reader
	leases    *LeaseSightings
	imsByNode *InstanceManagerIndex
	fencers   Fencers
	nodes     map[string]failover.ReplicaNode
}

// Pass starts a pass for spec at now; it reads nothing yet.
func (o Observer) Pass(spec s3gwv1alpha1.S3GWRemediationSpec, now time.Time) *Pass {
	pods := o.APIReader
	if workloads.Covered(spec, o.WorkloadCache) {
		pods = workloads.CachedPods{Reader: o.Client, Store: o.PodStore}
	}
	return &Pass{Longhorn: longhorn.State{Reader: o.Client, Namespace: spec.Release.LonghornNamespaceOrDefault()},
		now: now, spec: spec, pods: pods, leases: o.Leases, imsByNode: o.InstanceManagers, fencers: o.Fencers,
		nodes: map[string]failover.ReplicaNode{}}
}

// Pods reads the spec's pods: from the cache when it holds all of them,
// else uncached.
func (p *Pass) Pods() client.Reader { return p.pods }

// ReadLonghorn reads whether Longhorn's CRDs are served, into
// LonghornAvailable.
func (p *Pass) ReadLonghorn(ctx context.Context) error {
	available, err := p.Longhorn.Available(ctx)
	p.LonghornAvailable = available
	return err
}

// Volume converts a classified volume of a pod on node and, for a Longhorn
// RWO volume while Longhorn is available, reads its Longhorn Volume, its
// tickets for node and its replicas with their nodes.
func (p *Pass) Volume(ctx context.Context, tv s3gwv1alpha1.RecordedVolume, node string) (failover.Volume, error) {
	v := failover.Volume{Claim: tv.ClaimName, PersistentVolume: tv.PersistentVolume, LonghornVolume: tv.LonghornVolume,
		SkipReason: tv.SkipReason}
	if !v.Releasable() {
		return v, nil
	}
	if !p.LonghornAvailable {
		return v, nil
	}
	view, err := p.Longhorn.Volume(ctx, tv.LonghornVolume, node)
	if err != nil {
		return v, err
	}
	v.LonghornVolumeMissing, v.RevisionCounterDisabled = !view.Exists, view.RevisionCounterDisabled
	for _, t := range view.TicketsOnNode {
		v.Tickets = append(v.Tickets, failover.Ticket{ID: t.ID, Type: t.Type})
	}
	for _, replica := range view.Replicas {
		host, err := p.replicaNode(ctx, replica.Node)
		if err != nil {
			return v, err
		}
		v.Replicas = append(v.Replicas, failover.Replica{Name: replica.Name, Node: replica.Node,
			Healthy: replica.Healthy, Host: host})
	}
	return v, nil
}

// replicaNode reads, once per pass, the Longhorn Node, the kubelet Lease and
// what fences a node replicas live on.
func (p *Pass) replicaNode(ctx context.Context, node string) (failover.ReplicaNode, error) {
	if host, ok := p.nodes[node]; ok {
		return host, nil
	}
	lh, err := p.LonghornNode(ctx, node)
	if err != nil {
		return failover.ReplicaNode{}, err
	}
	lease, err := NodeLease(ctx, p.Longhorn.Reader, node)
	if err != nil {
		return failover.ReplicaNode{}, err
	}
	ims, err := p.instanceManagersOn(ctx, node)
	if err != nil {
		return failover.ReplicaNode{}, err
	}
	host := failover.ReplicaNode{Longhorn: lh, Heartbeat: Heartbeat(nil, lease), InstanceManagers: ims}
	host.Heartbeat.Seen = p.leases.Of(node)
	if err := p.readFence(ctx, node, &host); err != nil {
		return failover.ReplicaNode{}, err
	}
	p.nodes[node] = host
	return host, nil
}

// readFence reads what may fence a replica node itself: its Ready
// condition, its out-of-service taint and the fencers' CRs for it.
func (p *Pass) readFence(ctx context.Context, name string, host *failover.ReplicaNode) error {
	node := &corev1.Node{}
	if err := p.Longhorn.Reader.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			host.Ready, host.ReadySince = string(c.Status), c.LastTransitionTime.Time
		}
	}
	for _, t := range node.Spec.Taints {
		host.OutOfServiceTaint = host.OutOfServiceTaint || (t.Key == corev1.TaintNodeOutOfService && t.Effect == corev1.TaintEffectNoExecute)
	}
	if p.fencers == nil {
		return nil
	}
	crs, err := p.fencers(ctx, p.spec, name)
	host.Fencers = crs
	return err
}

// LonghornNode reads a Longhorn Node's Ready condition.
func (p *Pass) LonghornNode(ctx context.Context, node string) (failover.LonghornNode, error) {
	readiness, err := p.Longhorn.NodeReadiness(ctx, node)
	if err != nil {
		return failover.LonghornNode{}, err
	}
	return failover.LonghornNode{Found: readiness.Found, Status: readiness.Status, Reason: readiness.Reason}, nil
}
