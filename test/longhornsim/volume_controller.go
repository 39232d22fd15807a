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

package longhornsim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
)

// volumeReconciler plays longhorn-manager's volume attachment, volume,
// engine and replica controllers for one volume at a time. It is the only
// writer of Volume spec.nodeID and status, Engines, Replica status and
// Longhorn VolumeAttachment status; tickets (Longhorn VolumeAttachment
// spec) belong to their requesters.
type volumeReconciler struct {
	client      client.Client
	attachDelay time.Duration
	now         func() time.Time

	mu sync.Mutex
	// attachingSince remembers when each attach began, to finish it after
	// attachDelay. Losing it (a restart) merely restarts the delay.
	attachingSince map[string]time.Time
}

var _ reconcile.Reconciler = &volumeReconciler{}

func (r *volumeReconciler) setupWithManager(mgr ctrl.Manager) error {
	byVolumeLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if v := o.GetLabels()[longhorn.VolumeLabel]; v != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: Namespace, Name: v}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("longhornsim-volume").
		For(&longhorn.Volume{}).
		// The Longhorn VolumeAttachment is named after its volume.
		Watches(&longhorn.VolumeAttachment{}, &handler.EnqueueRequestForObject{}).
		Watches(&longhorn.Replica{}, byVolumeLabel).
		Watches(&longhorn.Engine{}, byVolumeLabel).
		// A node's health changes what Longhorn can do with the volumes
		// whose engine, replicas or tickets are there, and nothing else: a
		// kubelet's status heartbeat is no change.
		Watches(&longhorn.Node{}, handler.EnqueueRequestsFromMapFunc(r.volumesOnNode),
			builder.WithPredicates(changedHealth(func(n *longhorn.Node) [2]bool {
				return [2]bool{attachrules.LonghornNodeReady(n), nodeDown(n)}
			}))).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.volumesOnNode),
			builder.WithPredicates(changedHealth(kubeletRunning))).
		Complete(quietOnStop{r})
}

// volumesOnNode lists the volumes a change of node o's health can move:
// those with their engine, a replica, a ticket or their spec or current
// node there. Upstream the volume controller is woken by a Longhorn Node
// only for volumes with an unscheduled or failed replica
// (controller/volume_controller.go enqueueNodeChange), and otherwise
// through the status of its engines and replicas (enqueueControlleeChange),
// which the engine and replica controllers, played here too, change when
// their node's instance manager does. The lists are read without copies:
// a node's health changes rarely, but every volume is read.
func (r *volumeReconciler) volumesOnNode(ctx context.Context, o client.Object) []reconcile.Request {
	node := o.GetName()
	var volumes longhorn.VolumeList
	var engines longhorn.EngineList
	var replicas longhorn.ReplicaList
	var tickets longhorn.VolumeAttachmentList
	for _, list := range []client.ObjectList{&volumes, &engines, &replicas, &tickets} {
		if err := r.client.List(ctx, list, client.InNamespace(Namespace), client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing Longhorn objects to map a node's change failed", "node", node)
			return nil
		}
	}
	return involvedVolumes(node, volumes.Items, engines.Items, replicas.Items, tickets.Items)
}

// involvedVolumes are the requests for the volumes with their own node,
// their engine, a replica or a ticket on node.
func involvedVolumes(node string, volumes []longhorn.Volume, engines []longhorn.Engine, replicas []longhorn.Replica,
	tickets []longhorn.VolumeAttachment) []reconcile.Request {
	names := map[string]bool{}
	for i := range volumes {
		if slices.Contains(volumeNodes(&volumes[i]), node) {
			names[volumes[i].Name] = true
		}
	}
	for _, e := range engines {
		if e.Spec.NodeID == node {
			names[e.Labels[longhorn.VolumeLabel]] = true
		}
	}
	for _, rep := range replicas {
		if rep.Spec.NodeID == node {
			names[rep.Labels[longhorn.VolumeLabel]] = true
		}
	}
	for i := range tickets {
		if slices.Contains(ticketNodes(&tickets[i]), node) {
			names[tickets[i].Name] = true
		}
	}
	delete(names, "")
	reqs := make([]reconcile.Request, 0, len(names))
	for _, name := range slices.Sorted(maps.Keys(names)) {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: Namespace, Name: name}})
	}
	return reqs
}

// changedHealth lets through a node's creation, deletion, and the updates
// that change what health reads of it.
func changedHealth[T client.Object, H comparable](health func(T) H) predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(T)
		cur, okNew := e.ObjectNew.(T)
		return !okOld || !okNew || health(old) != health(cur)
	}}
}

// volumeScope is everything one pass reads.
type volumeScope struct {
	volume   *longhorn.Volume
	lhva     *longhorn.VolumeAttachment // nil if missing
	engine   *longhorn.Engine
	replicas []longhorn.Replica
	view     clusterView
	// viewErr is set when view could not read a node it was asked about.
	viewErr error
}

func (r *volumeReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	s, err := r.read(ctx, req)
	if err != nil || s == nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)
	now := r.now()

	var tickets map[string]*longhorn.AttachmentTicket
	if s.lhva != nil {
		tickets = s.lhva.Spec.AttachmentTickets
	}
	cur := attachment{
		nodeID:        s.volume.Spec.NodeID,
		state:         s.volume.Status.State,
		currentNodeID: s.volume.Status.CurrentNodeID,
		engineNodeID:  s.engine.Spec.NodeID,
	}
	if cur.state == "" {
		cur.state = stateDetached
	}
	step := stepAttachment(cur, tickets, replicaRecords(s.replicas), s.view, r.attachingFor(req.Name, cur, now), r.attachDelay)
	r.trackAttaching(req.Name, step, now)
	if step.next != cur {
		log.V(1).Info("Moving Longhorn volume", "from", cur.String(), "to", step.next.String())
	}

	if err := r.writeVolume(ctx, s, step.next); err != nil {
		return conflictRetry(err)
	}
	if err := r.writeEngine(ctx, s, step.next); err != nil {
		return conflictRetry(err)
	}
	if err := r.writeReplicas(ctx, s, step.next); err != nil {
		return conflictRetry(err)
	}
	// Tickets are reported satisfied last, so whoever sees a satisfied
	// ticket also finds the volume attached.
	if err := r.writeTicketStatuses(ctx, s, step.next, metav1.NewTime(now)); err != nil {
		return conflictRetry(err)
	}
	return ctrl.Result{RequeueAfter: step.waitFor}, nil
}

func (r *volumeReconciler) read(ctx context.Context, req reconcile.Request) (*volumeScope, error) {
	s := &volumeScope{volume: &longhorn.Volume{}}
	if err := r.client.Get(ctx, req.NamespacedName, s.volume); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.Name)
			return nil, nil
		}
		return nil, fmt.Errorf("getting Longhorn Volume %s: %w", req.Name, err)
	}
	lhva := &longhorn.VolumeAttachment{}
	if err := r.client.Get(ctx, req.NamespacedName, lhva); err == nil {
		s.lhva = lhva
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("getting Longhorn VolumeAttachment %s: %w", req.Name, err)
	}

	var engines longhorn.EngineList
	if err := r.client.List(ctx, &engines, client.InNamespace(Namespace), client.MatchingLabels{longhorn.VolumeLabel: req.Name}); err != nil {
		return nil, fmt.Errorf("listing Engines of %s: %w", req.Name, err)
	}
	if len(engines.Items) == 0 {
		return nil, nil // CreateVolume makes the engine next; its watch brings us back
	}
	s.engine = &engines.Items[0]

	var replicas longhorn.ReplicaList
	if err := r.client.List(ctx, &replicas, client.InNamespace(Namespace), client.MatchingLabels{longhorn.VolumeLabel: req.Name}); err != nil {
		return nil, fmt.Errorf("listing Replicas of %s: %w", req.Name, err)
	}
	s.replicas = replicas.Items

	s.view = readClusterView(ctx, r.client, &s.viewErr)
	// Read every node the pass may ask about now, so that a failed read
	// stops it before it writes.
	for _, node := range s.nodes() {
		s.view.ready(node)
		s.view.reachable(node)
	}
	if s.viewErr != nil {
		return nil, s.viewErr
	}
	return s, nil
}

// nodes are the nodes the volume involves: its own, its engine's, its
// replicas' and its tickets'.
func (s *volumeScope) nodes() []string {
	nodes := append(volumeNodes(s.volume), s.engine.Spec.NodeID)
	for _, rep := range s.replicas {
		nodes = append(nodes, rep.Spec.NodeID)
	}
	if s.lhva != nil {
		nodes = append(nodes, ticketNodes(s.lhva)...)
	}
	return slices.DeleteFunc(nodes, func(n string) bool { return n == "" })
}

// volumeNodes are the nodes the volume's spec and status name.
func volumeNodes(v *longhorn.Volume) []string {
	return []string{v.Spec.NodeID, v.Status.CurrentNodeID}
}

// ticketNodes are the nodes the tickets of a Longhorn VolumeAttachment ask
// for.
func ticketNodes(va *longhorn.VolumeAttachment) []string {
	var nodes []string
	for _, t := range va.Spec.AttachmentTickets {
		if t != nil {
			nodes = append(nodes, t.NodeID)
		}
	}
	return nodes
}

func (r *volumeReconciler) writeVolume(ctx context.Context, s *volumeScope, a attachment) error {
	v := s.volume
	base := v.DeepCopy()
	v.Spec.NodeID = a.nodeID
	if err := patchIfChanged(ctx, r.client, v, base, false); err != nil {
		return fmt.Errorf("updating Longhorn Volume %s spec: %w", v.Name, err)
	}
	base = v.DeepCopy()
	v.Status.State = a.state
	v.Status.CurrentNodeID = a.currentNodeID
	v.Status.Robustness = volumeRobustness(a, s.view)
	if err := patchStatusIfChanged(ctx, r.client, v, base); err != nil {
		return fmt.Errorf("updating Longhorn Volume %s status: %w", v.Name, err)
	}
	return nil
}

func (r *volumeReconciler) writeEngine(ctx context.Context, s *volumeScope, a attachment) error {
	want := s.engine.DeepCopy()
	setEngine(want, a, s.replicas, s.view)

	e := s.engine
	base := e.DeepCopy()
	e.Spec = want.Spec
	if err := patchIfChanged(ctx, r.client, e, base, false); err != nil {
		return fmt.Errorf("updating Engine %s spec: %w", e.Name, err)
	}
	base = e.DeepCopy()
	e.Status = want.Status
	if err := patchStatusIfChanged(ctx, r.client, e, base); err != nil {
		return fmt.Errorf("updating Engine %s status: %w", e.Name, err)
	}
	return nil
}

func (r *volumeReconciler) writeReplicas(ctx context.Context, s *volumeScope, a attachment) error {
	for i := range s.replicas {
		rep := &s.replicas[i]
		base := rep.DeepCopy()
		rep.Status.CurrentState = replicaState(*rep, a, s.view)
		if err := patchStatusIfChanged(ctx, r.client, rep, base); err != nil {
			return fmt.Errorf("updating Replica %s status: %w", rep.Name, err)
		}
	}
	return nil
}

func (r *volumeReconciler) writeTicketStatuses(ctx context.Context, s *volumeScope, a attachment, now metav1.Time) error {
	if s.lhva == nil {
		return nil
	}
	base := s.lhva.DeepCopy()
	s.lhva.Status.AttachmentTicketStatuses = ticketStatuses(s.lhva.Spec.AttachmentTickets, a, s.view,
		base.Status.AttachmentTicketStatuses, now)
	if err := patchStatusIfChanged(ctx, r.client, s.lhva, base); err != nil {
		return fmt.Errorf("updating Longhorn VolumeAttachment %s status: %w", s.lhva.Name, err)
	}
	return nil
}

// attachingFor is how long the volume has been attaching.
func (r *volumeReconciler) attachingFor(volume string, a attachment, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	since, ok := r.attachingSince[volume]
	if a.state != stateAttaching || !ok {
		return 0
	}
	return now.Sub(since)
}

func (r *volumeReconciler) trackAttaching(volume string, step attachStep, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, tracked := r.attachingSince[volume]
	switch {
	case step.next.state != stateAttaching:
		delete(r.attachingSince, volume)
	case step.startedAttaching || !tracked:
		r.attachingSince[volume] = now
	}
}

func (r *volumeReconciler) forget(volume string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.attachingSince, volume)
}

func replicaRecords(replicas []longhorn.Replica) []replicaRecord {
	out := make([]replicaRecord, 0, len(replicas))
	for _, r := range replicas {
		out = append(out, replicaRecord{node: r.Spec.NodeID, state: r.Status.CurrentState})
	}
	return out
}

// readClusterView answers about node health from the cache, one node at a
// time as the pass asks (it asks about the few nodes its volume involves),
// each read once. A read that fails, other than a missing node, is kept in
// *err: the pass must not act on a guess.
func readClusterView(ctx context.Context, c client.Client, err *error) clusterView {
	lhNodes := map[string]*longhorn.Node{}
	running := map[string]bool{}
	lhNode := func(name string) *longhorn.Node {
		n, seen := lhNodes[name]
		if !seen {
			n = &longhorn.Node{}
			if getErr := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, n); getErr != nil {
				n = nil
				if !apierrors.IsNotFound(getErr) && *err == nil {
					*err = fmt.Errorf("getting Longhorn Node %s: %w", name, getErr)
				}
			}
			lhNodes[name] = n
		}
		return n
	}
	kubelet := func(name string) bool {
		up, seen := running[name]
		if !seen {
			var n corev1.Node
			getErr := c.Get(ctx, client.ObjectKey{Name: name}, &n)
			if getErr != nil && !apierrors.IsNotFound(getErr) && *err == nil {
				*err = fmt.Errorf("getting Node %s: %w", name, getErr)
			}
			up = getErr == nil && kubeletRunning(&n)
			running[name] = up
		}
		return up
	}
	return clusterView{
		ready:     func(n string) bool { return attachrules.LonghornNodeReady(lhNode(n)) },
		down:      func(n string) bool { return nodeDown(lhNode(n)) },
		reachable: kubelet,
	}
}
