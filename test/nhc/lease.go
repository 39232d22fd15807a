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

package nhc

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The node lease as NHC manages it (internal/controller/resources/lease.go
// over medik8s/common's pkg/lease), on the emulator's clock.
const (
	// LeaseBuffer is added to the current remediation timeout to give the
	// lease's duration.
	LeaseBuffer = time.Minute
	// leaseTakenRequeue is how long NHC waits when another holder has the
	// lease.
	leaseTakenRequeue = time.Minute
	// maxTimesToExtendLease: the lease is overdue after acquireTime plus
	// (this + 1) × the current timeout plus the previous steps' timeouts.
	maxTimesToExtendLease = 2
)

// errLeaseHeld is common's AlreadyHeldError: another holder has a valid lease.
type errLeaseHeld struct{ holder string }

func (e errLeaseHeld) Error() string {
	return fmt.Sprintf("the node lease is held by %s", e.holder)
}

// errLeaseOverdue is NHC's LeaseOverDueError.
var errLeaseOverdue = errors.New("the node lease is overdue")

func leaseKey(node string) client.ObjectKey {
	return client.ObjectKey{Namespace: LeaseNamespace, Name: "node-" + node}
}

// Lease returns the node's lease, for tests asserting nobody else changed it.
func (e *Emulator) Lease(ctx context.Context, node string) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := e.Client.Get(ctx, leaseKey(node), lease)
	return lease, err
}

// obtainLease is NHC's ObtainNodeLease before it creates a CR: the lease for
// the current timeout plus the buffer. It returns when to come back.
func (e *Emulator) obtainLease(ctx context.Context, node string, current time.Duration) (time.Duration, error) {
	if err := e.requestLease(ctx, node, current+LeaseBuffer); err != nil {
		var held errLeaseHeld
		if errors.As(err, &held) {
			return leaseTakenRequeue, err
		}
		return 0, err
	}
	return current, nil
}

// manageLease is NHC's ManageLease for a node whose CR exists: it leaves a
// lease it does not hold alone, invalidates an overdue one (errLeaseOverdue)
// and extends one about to expire.
func (e *Emulator) manageLease(ctx context.Context, node string, current, previous time.Duration) (time.Duration, error) {
	lease, err := e.Lease(ctx, node)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("getting lease of node %s: %w", node, err)
	}
	if !e.holds(lease) {
		return 0, nil
	}
	if lease.Spec.AcquireTime == nil {
		return 0, fmt.Errorf("lease of node %s has no acquireTime", node)
	}
	overdueAt := lease.Spec.AcquireTime.Add(time.Duration(maxTimesToExtendLease+1)*current + previous)
	now := e.Clock.Now()
	if now.After(overdueAt) {
		if err := e.invalidateLease(ctx, node); err != nil {
			return 0, err
		}
		return 0, errLeaseOverdue
	}
	if expiry(lease).Before(now.Add(current)) {
		if err := e.requestLease(ctx, node, current+LeaseBuffer); err != nil {
			return 0, err
		}
	}
	return current, nil
}

func (e *Emulator) holds(lease *coordinationv1.Lease) bool {
	return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity == e.holder()
}

func expiry(lease *coordinationv1.Lease) time.Time {
	return lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
}

// requestLease is common's RequestLease: create the lease, owned by the
// Node; renew our own when it would expire within d (a lapsed one of ours
// also gets a new acquireTime only if it had none); take over another
// holder's once it has expired; refuse a valid foreign one.
func (e *Emulator) requestLease(ctx context.Context, nodeName string, d time.Duration) error {
	node := &corev1.Node{}
	if err := e.Client.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		if apierrors.IsNotFound(err) {
			// Only the step-by-step API gets here: NHC remediates listed
			// nodes. A Node missing from the API gets no lease.
			return nil
		}
		return fmt.Errorf("getting node %s for its lease: %w", nodeName, err)
	}
	if err := e.ensureLeaseNamespace(ctx); err != nil {
		return err
	}
	now := metav1.NewMicroTime(e.Clock.Now())
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
	lease := &coordinationv1.Lease{}
	err := e.Client.Get(ctx, leaseKey(nodeName), lease)
	if apierrors.IsNotFound(err) {
		key := leaseKey(nodeName)
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(e.holder()),
				LeaseDurationSeconds: ptr.To(int32(d.Seconds())),
				AcquireTime:          &now, RenewTime: &now, LeaseTransitions: ptr.To(int32(0)),
			},
		}
		if err := e.Client.Create(ctx, lease); err != nil {
			return fmt.Errorf("creating lease %s: %w", lease.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting lease of node %s: %w", nodeName, err)
	}

	update, acquire := false, false
	switch {
	case e.holds(lease) && (lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil):
		update, acquire = true, true
	case e.holds(lease) && expiry(lease).Before(now.Time):
		update, acquire = true, lease.Spec.AcquireTime == nil
	case e.holds(lease):
		update = expiry(lease).Before(now.Add(d))
	case valid(lease, now.Time):
		return errLeaseHeld{holder: ptr.Deref(lease.Spec.HolderIdentity, "unknown")}
	default: // an expired foreign lease is taken over
		update, acquire = true, true
	}
	if !update {
		return nil
	}
	if acquire {
		lease.Spec.AcquireTime = &now
		lease.Spec.LeaseTransitions = ptr.To(ptr.Deref(lease.Spec.LeaseTransitions, 0) + 1)
	}
	lease.OwnerReferences = []metav1.OwnerReference{owner}
	lease.Spec.HolderIdentity = ptr.To(e.holder())
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(d.Seconds()))
	lease.Spec.RenewTime = &now
	if err := e.Client.Update(ctx, lease); err != nil {
		return fmt.Errorf("updating lease %s: %w", lease.Name, err)
	}
	return nil
}

// valid is common's isValidLease: not expired, and not renewed in the future.
func valid(lease *coordinationv1.Lease, now time.Time) bool {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return false
	}
	return !expiry(lease).Before(now) && !lease.Spec.RenewTime.After(now)
}

// invalidateLease deletes the node's lease if this NodeHealthCheck holds it
// (NHC ignores a lease held by another).
func (e *Emulator) invalidateLease(ctx context.Context, node string) error {
	lease, err := e.Lease(ctx, node)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting lease of node %s: %w", node, err)
	}
	if lease.Spec.HolderIdentity != nil && !e.holds(lease) {
		return nil
	}
	if err := e.Client.Delete(ctx, lease); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("invalidating lease of node %s: %w", node, err)
	}
	return nil
}

// ensureLeaseNamespace creates medik8s-leases, as common's lease manager
// does when NHC builds it.
func (e *Emulator) ensureLeaseNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: LeaseNamespace}}
	if err := e.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("creating namespace %s: %w", LeaseNamespace, err)
	}
	return nil
}
