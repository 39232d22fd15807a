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

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// patchIfChanged writes the difference between base and obj (metadata and
// spec) as a merge patch, and nothing when there is none. Objects that
// another loop also writes get an optimistic lock, so a stale read makes the
// write fail instead of undoing the other loop's change.
func patchIfChanged(ctx context.Context, c client.Client, obj, base client.Object, sharedWithOtherWriters bool) error {
	if equality.Semantic.DeepEqual(base, obj) {
		return nil
	}
	if sharedWithOtherWriters {
		return c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	}
	return c.Patch(ctx, obj, client.MergeFrom(base))
}

// patchStatusIfChanged writes the status difference between base and obj.
// Every status the simulator writes has exactly one writing loop.
func patchStatusIfChanged(ctx context.Context, c client.Client, obj, base client.Object) error {
	if equality.Semantic.DeepEqual(base, obj) {
		return nil
	}
	return c.Status().Patch(ctx, obj, client.MergeFrom(base))
}

// conflictRetry turns an optimistic-lock conflict into a quiet, prompt retry:
// it only means the cache was behind another writer.
func conflictRetry(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetryInterval}, nil
	}
	return ctrl.Result{}, err
}

// quietOnStop drops the errors of a reconcile cut short by the simulator
// stopping, which would otherwise end every test run with error logs.
type quietOnStop struct{ reconcile.Reconciler }

func (q quietOnStop) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	res, err := q.Reconciler.Reconcile(ctx, req)
	if err != nil && ctx.Err() != nil {
		return ctrl.Result{}, nil
	}
	return res, err
}
