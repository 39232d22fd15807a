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

package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/s3gw-tech/s3gw-remediation/controllers/prepull"
	"github.com/s3gw-tech/s3gw-remediation/internal/eventrecorder"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

// Wiring is what differs between the manager's process and a test's that
// runs the operator in a manager of its own.
type Wiring struct {
	// WorkloadCache is the label selector the manager caches pods by
	// (CacheOptions).
	WorkloadCache labels.Selector
	// Metrics records the operator's metrics.
	Metrics *metrics.Recorder
	// Intervals are the remediation's backstop re-checks; nil: the
	// defaults.
	Intervals *Intervals
	// NodeMonitorGracePeriod is kube-controller-manager's, for the
	// protection report's expected RTO.
	NodeMonitorGracePeriod time.Duration
	// ReportInterval is the least time between two passes of one template's
	// protection report.
	ReportInterval time.Duration
	// PrePullImage is the operator's own image, which the pre-pull pods
	// run (cmd/prepull); empty pre-pulls nothing and says so on the
	// templates that ask for it.
	PrePullImage string
	// ImagePullEstimate is what a cold candidate node adds to a pod's
	// expected RTO in the protection report; zero means its default.
	ImagePullEstimate time.Duration
}

// SetupReconcilers adds the template, remediation, protection and pre-pull
// reconcilers to mgr. The remediation and the protection report share one
// watch of the node Leases and one index of Longhorn's instance managers,
// so each is cached once; the pre-pull reconciler and the protection
// report share the cache of pre-pull DaemonSets and pods.
func SetupReconcilers(ctx context.Context, mgr ctrl.Manager, w Wiring) error {
	if err := (&TemplateReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the template controller: %w", err)
	}
	recorder := eventrecorder.Legacy{Recorder: mgr.GetEventRecorder("s3gw-remediation")}
	leases, err := WatchLeases(ctx, mgr.GetCache(), clock.RealClock{})
	if err != nil {
		return err
	}
	instanceManagers := storage.NewInstanceManagerIndex(mgr.GetCache())

	remediation := NewRemediationReconciler(mgr.GetClient(), mgr.GetAPIReader(), recorder, clock.RealClock{}, w.Metrics)
	remediation.WorkloadCache = w.WorkloadCache
	remediation.Leases = leases
	remediation.InstanceManagers = instanceManagers
	if remediation.PodStore, err = InformerStore(ctx, mgr.GetCache(), &corev1.Pod{}); err != nil {
		return err
	}
	if w.Intervals != nil {
		remediation.Intervals = *w.Intervals
	}
	if err := remediation.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the remediation controller: %w", err)
	}

	prePull, err := prepull.NewCache(ctx, mgr)
	if err != nil {
		return err
	}
	if err := (&PrePullReconciler{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetAPIReader(),
		PrePull:       prePull,
		WorkloadCache: w.WorkloadCache,
		ProgramImage:  w.PrePullImage,
		Recorder:      recorder,
	}).SetupWithManager(mgr, prePull); err != nil {
		return fmt.Errorf("setting up the pre-pull controller: %w", err)
	}

	nodes, err := InformerStore(ctx, mgr.GetCache(), &corev1.Node{})
	if err != nil {
		return err
	}
	if err := (&ProtectionReconciler{
		Client:                 mgr.GetClient(),
		APIReader:              mgr.GetAPIReader(),
		Recorder:               recorder,
		Clock:                  clock.RealClock{},
		Metrics:                w.Metrics,
		WorkloadCache:          w.WorkloadCache,
		Leases:                 leases,
		InstanceManagers:       instanceManagers,
		NodeMonitorGracePeriod: w.NodeMonitorGracePeriod,
		ReportInterval:         w.ReportInterval,
		Nodes:                  nodes,
		PrePull:                prePull,
		ImagePullEstimate:      w.ImagePullEstimate,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the protection report: %w", err)
	}
	return nil
}
