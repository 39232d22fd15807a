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

package fencing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// EventDelegateCreated announces the delegate's fencer CR on the
// remediation.
const EventDelegateCreated = "FencingDelegateCreated"

// performDelegate makes the delegate's actions: create its fencer's CR,
// delete one whose success belongs to an earlier failure, or pass NHC's
// time-out on to it.
func performDelegate(ctx context.Context, in Input, a failover.Action) (Done, error) {
	switch a.Kind {
	case failover.CreateFencer:
		return createDelegate(ctx, in)
	case failover.DeleteFencer:
		logf.FromContext(ctx).Info("Deleting delegate fencing CR: its success belongs to an earlier failure")
		return Done{}, in.Delegate.Delete(ctx, in.Remediation)
	case failover.TimeOutFencer:
		return Done{}, in.Delegate.MarkTimedOut(ctx, in.Remediation)
	}
	return Done{}, fmt.Errorf("the delegate has no action %s", a.Kind)
}

// createDelegate creates the fencer's CR. A template that cannot be used is
// announced, not retried: the next step reports it in the Fenced condition.
func createDelegate(ctx context.Context, in Input) (Done, error) {
	spec := in.Remediation.Spec.Fencing.Delegate
	logf.FromContext(ctx).Info("Creating delegate fencing CR", "kind", spec.Kind)
	name, err := in.Delegate.Create(ctx, in.Remediation, in.Node)
	var invalid *DelegateError
	if errors.As(err, &invalid) {
		return Done{Reason: s3gwv1alpha1.ReasonInvalidDelegate, Message: invalid.Reason, Warning: true}, nil
	}
	if err != nil {
		return Done{}, err
	}
	kind := strings.TrimSuffix(spec.Kind, "Template")
	return Done{Created: &failover.RemediatorCR{Kind: kind, Name: name},
		Reason: EventDelegateCreated, Message: fmt.Sprintf("Created %s %s to fence node %s", kind, name, in.Node)}, nil
}

// cleanUpDelegate deletes every fencer CR the remediation created.
func cleanUpDelegate(ctx context.Context, in Input) error {
	return in.Delegate.Delete(ctx, in.Remediation)
}
