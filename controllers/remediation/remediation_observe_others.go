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

package remediation

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/fencing"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
	"github.com/s3gw-tech/s3gw-remediation/internal/workloads"
)

// observeOtherRemediations reads, through the cache, the node's other
// S3GWRemediations that select any of this step's targets: a pod the other
// lists on the node with its own spec (as its own step finds targets), or a
// target it recorded. The rule is the decision's (step.Rules); this
// only observes. One that NHC timed out or that is being deleted takes no
// new step, and is left out. S3GWRemediations are few (one per failed node
// and template) and cached: they are listed whole and matched by node
// (medik8s.NodeName), as the node watch maps them; a cache index would not
// be served by the uncached reader the envtest stories drive steps with.
func (r *Reconciler) observeOtherRemediations(ctx context.Context, s *scope) error {
	list := &s3gwv1alpha1.S3GWRemediationList{}
	// Read only: deep copies of every CR's status were the largest share of
	// a step's garbage at a thousand nodes. Another's spec is copied.
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing the other S3GWRemediations of node %s: %w", s.nodeName, err)
	}
	for i := range list.Items {
		other := &list.Items[i]
		if other.UID == s.rem.UID || medik8s.NodeName(other) != s.nodeName || !other.DeletionTimestamp.IsZero() || timedOut(other) {
			continue
		}
		selected, err := r.selectedBy(ctx, other, s.nodeName)
		if err != nil {
			return err
		}
		for _, t := range other.Status.Memory.Targets {
			selected[t.Key()] = true
		}
		var shared []string
		for _, t := range s.targets {
			if key := t.Key(); key != "" && selected[key] {
				shared = append(shared, t.Namespace+"/"+t.Name)
			}
		}
		if len(shared) > 0 {
			s.obs.Others = append(s.obs.Others, failover.OtherRemediation{Name: other.Namespace + "/" + other.Name,
				Spec: *other.Spec.DeepCopy(), Shared: shared})
		}
	}
	return nil
}

// selectedBy returns the keys (workloads.Key) of the pods on the node that
// the other remediation's spec selects; none when its selector does not
// parse, as it then moves nothing.
func (r *Reconciler) selectedBy(ctx context.Context, other *s3gwv1alpha1.S3GWRemediation, node string) (map[string]bool, error) {
	pods, err := workloads.List(ctx, r.storageObserver().Pass(other.Spec, r.Clock.Now()).Pods(), other.Spec, node)
	var invalid *workloads.InvalidSelectorError
	if errors.As(err, &invalid) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(pods))
	for i := range pods {
		out[string(pods[i].UID)] = true
	}
	return out, nil
}

// storageObserver reads pods, volumes and Longhorn's CRs for a step.
func (r *Reconciler) storageObserver() storage.Observer {
	return storage.Observer{Client: r.Client, APIReader: r.APIReader, WorkloadCache: r.WorkloadCache, Leases: r.Leases,
		InstanceManagers: r.InstanceManagers, PodStore: r.PodStore, Fencers: fencing.NodeFencers(r.Client)}
}
