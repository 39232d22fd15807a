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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
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
		// Node health changes what Longhorn can do with every volume.
		Watches(&longhorn.Node{}, handler.EnqueueRequestsFromMapFunc(r.allVolumes)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allVolumes)).
		Complete(quietOnStop{r})
}

func (r *volumeReconciler) allVolumes(ctx context.Context, _ client.Object) []reconcile.Request {
	var volumes longhorn.VolumeList
	if err := r.client.List(ctx, &volumes, client.InNamespace(Namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Longhorn Volumes failed")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(volumes.Items))
	for _, v := range volumes.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&v)})
	}
	return reqs
}

// volumeScope is everything one pass reads.
type volumeScope struct {
	volume   *longhorn.Volume
	lhva     *longhorn.VolumeAttachment // nil if missing
	engine   *longhorn.Engine
	replicas []longhorn.Replica
	view     clusterView
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

	view, err := readClusterView(ctx, r.client)
	if err != nil {
		return nil, err
	}
	s.view = view
	return s, nil
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

// readClusterView reads node health once per pass.
func readClusterView(ctx context.Context, c client.Client) (clusterView, error) {
	var lhNodes longhorn.NodeList
	if err := c.List(ctx, &lhNodes, client.InNamespace(Namespace)); err != nil {
		return clusterView{}, fmt.Errorf("listing Longhorn Nodes: %w", err)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return clusterView{}, fmt.Errorf("listing Nodes: %w", err)
	}
	byName := make(map[string]*longhorn.Node, len(lhNodes.Items))
	for i := range lhNodes.Items {
		byName[lhNodes.Items[i].Name] = &lhNodes.Items[i]
	}
	running := make(map[string]bool, len(nodes.Items))
	for i := range nodes.Items {
		running[nodes.Items[i].Name] = kubeletRunning(&nodes.Items[i])
	}
	return clusterView{
		ready:     func(n string) bool { return attachrules.LonghornNodeReady(byName[n]) },
		down:      func(n string) bool { return nodeDown(byName[n]) },
		reachable: func(n string) bool { return running[n] },
	}, nil
}
