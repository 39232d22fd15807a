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
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
)

// Request is the reconciler's one request: every pass brings all pre-pull
// DaemonSets in line with all templates, because a DaemonSet serves a
// gateway whichever templates select it, and a gateway two templates
// select gets one DaemonSet.
var Request = reconcile.Request{NamespacedName: types.NamespacedName{Name: "prepull"}}

// Reconciler keeps one pre-pull DaemonSet per gateway that a template with
// spec.prePull.enabled selects, in the gateway's namespace, owned by the
// gateway's controller; it deletes those no template wants any more. The
// DaemonSet controller places the pods; the protection report reads how
// warm the nodes are from their status.
type Reconciler struct {
	// Client reads templates and gateway pods through the manager's cache
	// and writes the DaemonSets.
	Client client.Client
	// APIReader reads the pods of templates the pod cache does not cover.
	APIReader client.Reader
	// PrePull reads the pre-pull DaemonSets (NewCache).
	PrePull client.Reader
	// WorkloadCache is the label selector the manager caches pods by.
	WorkloadCache labels.Selector
	// ProgramImage is the operator's own image, which holds the pre-pull
	// program (cmd/prepull); without it no DaemonSet is written.
	ProgramImage string
	Recorder     record.EventRecorder
	// UncachedResync is how often a pass runs while an enabled template's
	// pods are not cached (no pod event reaches it); zero means a minute.
	UncachedResync time.Duration
	// Clock times the grace of DaemonSets whose gateway is between pods;
	// nil means the real clock.
	Clock clock.PassiveClock
	// Grace is how long such a DaemonSet is kept; zero means DefaultGrace.
	Grace time.Duration
	// Batch is how long a pass waits after the event that wakes it; zero
	// means DefaultBatch.
	Batch time.Duration

	// unwanted is when each DaemonSet (by UID) was first seen without a
	// gateway pod while a template that wanted it still pre-pulls. Lost
	// on a restart, which only starts its grace again.
	unwanted sync.Map // types.UID → time.Time
	// hashes are the gateways' DaemonSets' spec hashes, remembered with
	// what they were computed from: a pass builds only the DaemonSets of
	// gateways that changed.
	hashes prepull.SpecHashes
}

// DefaultGrace is how long a DaemonSet without a gateway pod is kept while
// a template that wanted it still pre-pulls: a failover's force delete and
// the ReplicaSet's replacement, or a Recreate rollout's scale down and up,
// leave the gateway without a pod for a moment, and deleting the DaemonSet
// then would stop the pre-pull pods just to start them again.
const DefaultGrace = time.Minute

var _ reconcile.Reconciler = &Reconciler{}

// The DaemonSets live in the gateways' namespaces, which any template may
// select: the rights are cluster-wide, and config/policy holds the writes
// to DaemonSets labelled s3gw-remediation.medik8s.io/prepull whose pods
// run unprivileged. Their pods are read, never written.
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=s3gw-remediation.medik8s.io,resources=s3gwremediationtemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile observes the gateways of every enabled template and the
// existing DaemonSets, plans, and writes the difference.
func (r *Reconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	o, err := r.observe(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(o.gateways) > 0 && r.ProgramImage == "" {
		r.warnNoProgramImage(o)
		return ctrl.Result{}, nil
	}
	desired, keep := o.desired(r.ProgramImage, &r.hashes)
	wait := r.holdUnwanted(o, desired, keep)
	plan := prepull.PlanChanges(desired, keep, o.existing)
	err = r.act(ctx, o, plan)
	var res ctrl.Result
	if o.uncached {
		res.RequeueAfter = r.uncachedResync()
	}
	if wait > 0 && (res.RequeueAfter == 0 || wait < res.RequeueAfter) {
		res.RequeueAfter = wait
	}
	return res, err
}

// holdUnwanted adds to keep each existing DaemonSet that no gateway pod
// wants now but a template that wanted it still pre-pulls
// (prepull.WantedByAny), until its grace ends, and returns how long until
// the first grace ends (zero: none runs).
func (r *Reconciler) holdUnwanted(o *observation, desired []prepull.Desired, keep map[types.NamespacedName]bool) time.Duration {
	now := r.clock().Now()
	wanted := map[types.NamespacedName]bool{}
	for _, d := range desired {
		wanted[d.NamespacedName] = true
	}
	existing := map[types.UID]bool{}
	for _, ds := range o.existing {
		existing[ds.UID] = true
	}
	r.unwanted.Range(func(uid, _ any) bool {
		if !existing[uid.(types.UID)] {
			r.unwanted.Delete(uid) // deleted meanwhile, by anyone
		}
		return true
	})
	var wait time.Duration
	for _, ds := range o.existing {
		key := types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name}
		if wanted[key] || keep[key] || !prepull.WantedByAny(ds, o.enabled) {
			r.unwanted.Delete(ds.UID)
			continue
		}
		since, _ := r.unwanted.LoadOrStore(ds.UID, now)
		if left := since.(time.Time).Add(r.grace()).Sub(now); left > 0 {
			keep[key] = true
			if wait == 0 || left < wait {
				wait = left
			}
		}
	}
	return wait
}

func (r *Reconciler) clock() clock.PassiveClock {
	if r.Clock != nil {
		return r.Clock
	}
	return clock.RealClock{}
}

func (r *Reconciler) grace() time.Duration {
	if r.Grace > 0 {
		return r.Grace
	}
	return DefaultGrace
}

func (r *Reconciler) uncachedResync() time.Duration {
	if r.UncachedResync > 0 {
		return r.UncachedResync
	}
	return time.Minute
}
