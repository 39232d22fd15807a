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

// Package monitoring tests what ships for Prometheus (config/prometheus,
// config/grafana) against what the manager exports: the alert rules with
// promtool on input series whose names and labels are checked against the
// real registries, and the dashboard's and the docs' metric names.
package monitoring

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
)

// leaderElectionID is cmd/manager's LeaderElectionID, the `name` label of
// leader_election_master_status.
const leaderElectionID = "s3gw-remediation.medik8s.io"

// series is one exported metric name (a histogram's _bucket, _sum and
// _count each count as one) and its label names.
type series map[string]map[string]bool

// exportedSeries gathers what the manager exports: every metric of
// internal/metrics, each written once, and the controller-runtime and
// client-go metrics the rules use, from the registry the manager serves.
func exportedSeries(t *testing.T) series {
	t.Helper()
	g := gomega.NewWithT(t)
	reg := prometheus.NewRegistry()
	r := metrics.New(reg)
	r.RemediationEnded(string(s3gwv1alpha1.PhaseFailed), s3gwv1alpha1.ReasonNoHealthyReplica)
	r.PhaseEnded(string(s3gwv1alpha1.PhaseWaitingForFencing), time.Second)
	r.PodEvicted()
	r.AttachmentReleased(string(s3gwv1alpha1.ReleaseControllerDetach))
	r.SetFencingBlocked("uid", "StorageIsolation")
	r.SetProtection(types.NamespacedName{Namespace: "ops", Name: "t"}, []metrics.PodProtection{
		{Namespace: "s3gw", Pod: "gw", Node: "a", Reason: "Protected", Protected: true, ExpectedRTO: time.Minute},
	})
	r.SetPhase(types.NamespacedName{Namespace: "ops", Name: "a"}, "a", string(s3gwv1alpha1.PhaseWaitingForFencing))
	r.SetWarmth(types.NamespacedName{Namespace: "ops", Name: "t"}, []metrics.PodWarmth{
		{Namespace: "s3gw", Pod: "gw", Node: "a", Reason: s3gwv1alpha1.ReasonAllCandidatesWarm, Candidates: 3, Warm: 3},
	})

	// client-go's elector exports its gauge (0) as soon as it exists.
	_, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: "ops", Name: leaderElectionID},
			LockConfig: resourcelock.ResourceLockConfig{Identity: "test"},
		},
		Name:          leaderElectionID,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
	g.Expect(err).NotTo(gomega.HaveOccurred())

	// A controller exports its reconcile metrics once started.
	c, err := controller.NewUnmanaged("s3gwremediation", controller.Options{
		Reconciler:         reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }),
		SkipNameValidation: ptr.To(true),
	})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	g.Eventually(func() series { return gather(g, ctrlmetrics.Registry) }).
		Should(gomega.HaveKey("controller_runtime_reconcile_errors_total"))
	cancel()
	g.Eventually(done).Should(gomega.Receive())

	out := gather(g, reg)
	for name, labels := range gather(g, ctrlmetrics.Registry) {
		out[name] = labels
	}
	return out
}

func gather(g *gomega.WithT, reg prometheus.Gatherer) series {
	families, err := reg.Gather()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	out := series{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]bool{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
			if f.GetType() != dto.MetricType_HISTOGRAM {
				out[f.GetName()] = labels
				continue
			}
			out[f.GetName()+"_sum"], out[f.GetName()+"_count"] = labels, labels
			bucket := map[string]bool{"le": true}
			for l := range labels {
				bucket[l] = true
			}
			out[f.GetName()+"_bucket"] = bucket
		}
	}
	return out
}
