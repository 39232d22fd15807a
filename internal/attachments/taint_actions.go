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

package attachments

import (
	"context"
	"fmt"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// EventTaintRemoved announces that the out-of-service taint a remediation
// added is gone.
const EventTaintRemoved = "TaintRemoved"

// tidyTaint makes what the OutOfServiceTaint strategy's Tidy asks for:
// remove the taint this remediation added, its work done, or the node's
// owner annotation that names no taint any more.
func tidyTaint(ctx context.Context, w Write, a failover.Action, done func(Released)) error {
	switch a.Kind {
	case failover.RemoveOwnTaint:
		return removeOwnTaint(ctx, w, done)
	case failover.DropStaleTaintOwner:
		logf.FromContext(ctx).Info("Removing the taint owner annotation: it names no taint on the node")
		return DropStaleTaintOwner(ctx, w.Client, w.Node, OutOfServiceTaint())
	}
	return fmt.Errorf("the out-of-service taint has no action %s", a.Kind)
}

// cleanUpTaint, when NodeHealthCheck deletes the remediation, removes a
// stale owner annotation (a fencer removed our taint by key) and the taint
// this remediation added.
func cleanUpTaint(ctx context.Context, w Write, done func(Released)) error {
	if w.Node == nil {
		return nil
	}
	if _, stale := TaintOwnership(w.Node, OutOfServiceTaint()); stale {
		if err := DropStaleTaintOwner(ctx, w.Client, w.Node, OutOfServiceTaint()); err != nil {
			return err
		}
	}
	return removeOwnTaint(ctx, w, done)
}

// removeOwnTaint removes the out-of-service taint the node's owner
// annotation says this remediation added, whatever status says: the taint
// and the annotation naming it were written together.
func removeOwnTaint(ctx context.Context, w Write, done func(Released)) error {
	taint := OutOfServiceTaint()
	if w.Node == nil || TaintOwner(w.Node, taint) != w.Owner {
		return nil
	}
	logf.FromContext(ctx).Info("Removing taint added by this remediation", "taint", taint.ToString())
	if err := RemoveOwnedTaint(ctx, w.Client, w.Node, taint, w.Owner); err != nil {
		return err
	}
	done(Released{Reason: EventTaintRemoved,
		Message: fmt.Sprintf("Removed %s, added by S3GWRemediation %s, from node %s", taint.ToString(), w.Remediation, w.Node.Name)})
	return nil
}
