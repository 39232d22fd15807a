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
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/internal/eventrecorder"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/internal/storage"
)

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// These stories run the real manager — cache, watches, workqueue, the
// events.k8s.io recorder — the way the operator runs in a cluster.
var _ = Describe("The manager", Ordered, func() {
	// The manager reconciles every namespace: it must be stopped before the
	// step-by-step stories run, or it would race them.
	var stop context.CancelFunc
	stopped := make(chan struct{})
	AfterAll(func() {
		stop()
		Eventually(stopped).WithTimeout(30 * time.Second).Should(BeClosed())
	})

	// requests logs the manager's requests to the API server but watches
	// and the template controller's (it annotates the templates of every
	// story in the suite).
	requests := &requestLog{}
	var leases *storage.LeaseSightings

	BeforeAll(func() {
		var mgrCtx context.Context
		mgrCtx, stop = context.WithCancel(suiteCtx)
		counted := rest.CopyConfig(cfg)
		counted.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				if req.URL.Query().Get("watch") != "true" && !strings.Contains(req.URL.Path, "/s3gwremediationtemplates") {
					if err := requests.record(req); err != nil {
						return nil, err
					}
				}
				return rt.RoundTrip(req)
			})
		})
		mgr, err := ctrl.NewManager(counted, ctrl.Options{
			Scheme:     env.Scheme,
			Metrics:    metricsserver.Options{BindAddress: "0"},
			Controller: config.Controller{SkipNameValidation: ptr.To(true)},
			Cache:      CacheOptions(DefaultWorkloadCache()),
			Client:     ClientOptions(),
		})
		Expect(err).NotTo(HaveOccurred())
		Expect((&TemplateReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)).To(Succeed())
		r := NewRemediationReconciler(mgr.GetClient(), mgr.GetAPIReader(),
			eventrecorder.Legacy{Recorder: mgr.GetEventRecorder("s3gw-remediation")},
			clock.RealClock{}, metrics.New(prometheus.NewRegistry()))
		r.WorkloadCache = DefaultWorkloadCache()
		leases, err = WatchLeases(mgrCtx, mgr.GetCache(), clock.RealClock{})
		Expect(err).NotTo(HaveOccurred())
		r.Leases = leases
		r.InstanceManagers = storage.NewInstanceManagerIndex(mgr.GetCache())
		// Backstops longer than any wait below: only watch events move the
		// remediation along, as they must in production.
		r.Intervals = Intervals{NodeFailure: time.Hour, Fencing: time.Hour, Release: time.Hour,
			Replacement: time.Hour, AfterFailure: time.Hour, Storage: time.Hour, Status: time.Hour}
		Expect(r.SetupWithManager(mgr)).To(Succeed())
		go func() {
			defer GinkgoRecover()
			defer close(stopped)
			Expect(mgr.Start(mgrCtx)).To(Succeed())
		}()
	})

	It("marks templates as supporting multiple templates", func() {
		w := newWorld(suiteCtx)
		t := w.template("plain", s3gwv1alpha1.S3GWRemediationSpec{}, false)
		Eventually(func(g Gomega) {
			g.Expect(w.c.Get(w.ctx, client.ObjectKeyFromObject(t), t)).To(Succeed())
			g.Expect(t.Annotations).To(HaveKeyWithValue("remediation.medik8s.io/multiple-templates-support", "true"))
		}).WithTimeout(30 * time.Second).Should(Succeed()) // the manager's caches may still be syncing
	})

	It("times node Lease renewals on its own clock, whatever the node's clock says", func() {
		node := "lease-clock-" + strings.ToLower(string(uuid.NewUUID())[:8])
		behind := metav1.NewMicroTime(time.Now().Add(-time.Hour)) // the node's clock, an hour behind
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &behind}}
		Expect(k8sClient.Create(suiteCtx, lease)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(suiteCtx, lease))).To(Succeed()) })
		Eventually(func() time.Time { return leases.Of(node).At }).WithTimeout(30 * time.Second).ShouldNot(BeZero())
		Expect(leases.Of(node).Witnessed).To(BeFalse(), "the first reading is no renewal")

		renewed := metav1.NewMicroTime(behind.Add(10 * time.Second))
		lease.Spec.RenewTime = &renewed
		before := time.Now()
		Expect(k8sClient.Update(suiteCtx, lease)).To(Succeed())
		Eventually(func() bool { return leases.Of(node).Witnessed }).WithTimeout(10 * time.Second).Should(BeTrue())
		seen := leases.Of(node)
		Expect(seen.At).To(BeTemporally(">=", before.Truncate(time.Second)))
		hb := storage.Heartbeat(nil, lease)
		hb.Seen = seen
		Expect(hb.Lagging(time.Now())).To(BeFalse(), "renewed just now on the controller's clock, an hour ago on the node's")
	})

	It("moves s3gw, woken only by watch events, and reports it through events.k8s.io Events; CR-to-Succeeded times are measured", func() {
		const runs = 5
		durations := make([]time.Duration, 0, runs)
		spent := make([]int64, 0, runs)  // the requests naming the remediation's world
		others := make([]int64, 0, runs) // other stories' leftovers and the manager's discovery
		for i := range runs {
			mark := requests.len()
			s := newFailedNodeScenario(s3gwv1alpha1.S3GWRemediationSpec{})
			start := time.Now() // the CR was created just before
			Eventually(func() bool {
				s.w.simulate() // the doubles react as the real components would
				return succeeded(s.w.remediation(s.key))
			}).WithTimeout(30 * time.Second).WithPolling(10 * time.Millisecond).Should(BeTrue())
			durations = append(durations, time.Since(start))
			named, all := requests.naming(s.w.id, mark)
			spent = append(spent, int64(named))
			others = append(others, int64(all-named))
			s.expectMoved()

			if i == 0 {
				Eventually(func(g Gomega) {
					list := &eventsv1.EventList{}
					g.Expect(s.w.c.List(s.w.ctx, list, client.InNamespace(s.w.ns))).To(Succeed())
					var reasons []string
					for _, e := range list.Items {
						if e.Regarding.Name == s.key.Name {
							reasons = append(reasons, e.Reason)
						}
					}
					g.Expect(reasons).To(ContainElements("RemediationStarted", remediation.EventPodEvicted, remediation.EventVolumeUnmarked,
						"RemediationFinished", remediation.EventS3GWMoved))
				}).WithTimeout(10 * time.Second).Should(Succeed())
			}
		}
		slices.Sort(durations)
		slices.Sort(spent)
		median := durations[runs/2]
		AddReportEntry("CR creation to Succeeded=True (envtest, manager)", median.String())
		AddReportEntry("API requests from the scenario's CR to Succeeded=True (envtest, manager)", spent)
		GinkgoWriter.Printf("envtest happy path: CR creation to Succeeded=True median %s over %d runs (min %s, max %s); "+
			"API requests per remediation %v (and %v meanwhile for other stories' objects and discovery)\n",
			median, runs, durations[0], durations[runs-1], spent, others)
		Expect(spent[runs-1]).To(BeNumerically("<=", 60), "the request budget of a happy-path remediation")
	})
})
