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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/s3gw-tech/s3gw-remediation/internal/prepull"
)

// Event reasons of the pre-pull controller, on the templates that want the
// DaemonSet.
const (
	// EventPrePullFailed: a DaemonSet could not be written; the message
	// says which and why (RBAC, an admission policy, a quota).
	EventPrePullFailed = "S3GWPrePullFailed"
	// EventPrePullUnavailable: the manager does not know its own image,
	// which the pre-pull pods run (--prepull-image).
	EventPrePullUnavailable = "S3GWPrePullUnavailable"
)

// act writes the plan, every write on its own: one that fails does not
// hold the others, and each is safe to repeat. Creates and updates that
// lost a race with the cache (AlreadyExists, Conflict, NotFound) are left
// to the pass their watch event brings.
func (r *Reconciler) act(ctx context.Context, o *observation, plan prepull.Plan) error {
	log := logf.FromContext(ctx)
	errs := make([]error, 0, len(plan.Create)+len(plan.Update)+len(plan.Delete))
	for _, ds := range plan.Create {
		log.Info("Creating pre-pull DaemonSet", "DaemonSet", klog.KObj(ds), "images", ds.Spec.Template.Annotations[prepull.ImagesAnnotation])
		errs = append(errs, r.failed(o, ds, "creating", r.Client.Create(ctx, ds)))
	}
	for _, ds := range plan.Update {
		log.Info("Updating pre-pull DaemonSet", "DaemonSet", klog.KObj(ds), "images", ds.Spec.Template.Annotations[prepull.ImagesAnnotation])
		errs = append(errs, r.failed(o, ds, "updating", r.Client.Update(ctx, ds)))
	}
	for _, ds := range plan.Delete {
		log.Info("Deleting pre-pull DaemonSet no template wants", "DaemonSet", klog.KObj(ds))
		err := r.Client.Delete(ctx, ds, client.Preconditions{UID: &ds.UID}, client.PropagationPolicy("Background"))
		errs = append(errs, r.failed(o, ds, "deleting", client.IgnoreNotFound(err)))
	}
	return kerrors.NewAggregate(errs)
}

// failed turns a write's error into the pass's, and warns the templates
// that want the DaemonSet unless it is a race the next pass settles.
func (r *Reconciler) failed(o *observation, ds *appsv1.DaemonSet, doing string, err error) error {
	if err == nil || apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	if g := o.gateways[types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name}]; g != nil {
		for _, t := range g.templates {
			r.Recorder.Eventf(t, corev1.EventTypeWarning, EventPrePullFailed, "Failed %s the pre-pull DaemonSet %s/%s of %s: %v",
				doing, ds.Namespace, ds.Name, g.gateway, err)
		}
	}
	return fmt.Errorf("%s pre-pull DaemonSet %s/%s: %w", doing, ds.Namespace, ds.Name, err)
}

// warnNoProgramImage tells each enabled template why nothing is pre-pulled.
func (r *Reconciler) warnNoProgramImage(o *observation) {
	warned := map[types.NamespacedName]bool{}
	for _, g := range o.gateways {
		for _, t := range g.templates {
			key := client.ObjectKeyFromObject(t)
			if warned[key] {
				continue
			}
			warned[key] = true
			r.Recorder.Eventf(t, corev1.EventTypeWarning, EventPrePullUnavailable,
				"Pre-pulling nothing: the manager does not know its own image, which the pre-pull pods run; set --prepull-image")
		}
	}
}
