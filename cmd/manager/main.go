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

// Command manager runs the s3gw-remediation controllers.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
	"github.com/s3gw-tech/s3gw-remediation/version"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(s3gwv1alpha1.AddToScheme(scheme))
	utilruntime.Must(longhorn.AddToScheme(scheme))
}

func main() {
	var (
		metricsAddr          string
		metricsSecure        bool
		probeAddr            string
		enableLeaderElection bool
		leaderElection       leaderElectionTimings
		leaderElectionNS     string
		enableHTTP2          bool
		workloadCache        string
		pprofAddr            string
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "Address the metrics endpoint binds to; 0 disables it.")
	flag.BoolVar(&metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS with Kubernetes authentication and authorization; false serves plain HTTP for local runs.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the health and ready probes bind to.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Elect a leader so that only one manager acts; the Deployment turns it on.")
	flag.DurationVar(&leaderElection.LeaseDuration, "leader-elect-lease-duration", defaultLeaderElection.LeaseDuration,
		"How long a standby waits after the leader's last renewal before it takes over: the takeover time when the leader's node dies.")
	flag.DurationVar(&leaderElection.RenewDeadline, "leader-elect-renew-deadline", defaultLeaderElection.RenewDeadline,
		"How long the leader keeps trying to renew before it gives up leadership and exits; shorter than the lease duration.")
	flag.DurationVar(&leaderElection.RetryPeriod, "leader-elect-retry-period", defaultLeaderElection.RetryPeriod,
		"How often the leader renews and a standby tries to acquire the lease.")
	flag.StringVar(&leaderElectionNS, "leader-election-namespace", "",
		"Namespace of the leader election Lease; empty means the manager's own namespace (required outside a cluster).")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"Serve metrics over HTTP/2; off by default against the HTTP/2 stream-cancellation CVEs.")
	flag.StringVar(&workloadCache, "workload-cache-selector", controllers.DefaultWorkloadCacheSelector,
		"Label selector of the pods the manager caches and watches. Templates whose workloadSelector requires it are "+
			"event-driven; others read their pods uncached. Empty caches every pod (memory grows with the cluster).")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0",
		"Address the Go profiler's /debug/pprof endpoints bind to; 0 disables them. For measuring, not for production.")
	opts := loggerOptions()
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	setupLog.Info("Starting s3gw-remediation", "version", version.Version)
	switch limit, why, err := softMemoryLimit(os.Getenv); {
	case err != nil:
		setupLog.Error(err, "Ignoring the container's memory limit")
	case limit > 0:
		debug.SetMemoryLimit(limit)
		setupLog.Info("Set the Go runtime's soft memory limit", "bytes", limit, "from", why)
	default:
		setupLog.Info("No soft memory limit set", "why", why)
	}
	if percent, why := gcPercentToSet(os.Getenv); percent > 0 {
		debug.SetGCPercent(percent)
		setupLog.Info("Set the garbage collector's target heap growth", "GOGC", percent, "from", why)
	}
	if err := leaderElection.validate(); err != nil {
		setupLog.Error(err, "Invalid leader election timings")
		os.Exit(1)
	}

	var tlsOpts []func(*tls.Config)
	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOptions := metricsserver.Options{
		BindAddress:   metricsAddr,
		SecureServing: metricsSecure,
		TLSOpts:       tlsOpts,
	}
	if metricsSecure {
		metricsOptions.FilterProvider = metricsAuth
	}

	cachedPods, err := labels.Parse(workloadCache)
	if err != nil {
		setupLog.Error(err, "Invalid --workload-cache-selector")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(uncompressed(ctrl.GetConfigOrDie()), ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOptions,
		HealthProbeBindAddress:  probeAddr,
		PprofBindAddress:        pprofAddr,
		WebhookServer:           newWebhookServer(tlsOpts),
		LeaderElection:          enableLeaderElection,
		LeaderElectionID:        "s3gw-remediation.medik8s.io",
		LeaderElectionNamespace: leaderElectionNS,
		LeaseDuration:           &leaderElection.LeaseDuration,
		RenewDeadline:           &leaderElection.RenewDeadline,
		RetryPeriod:             &leaderElection.RetryPeriod,
		// main exits as soon as the manager stops, so the leader can hand
		// the Lease over on SIGTERM (drain, rollout): the standby takes
		// over at once instead of after the lease duration.
		LeaderElectionReleaseOnCancel: true,
		// Cached objects are only read, and trimmed to what is read.
		Cache:  controllers.CacheOptions(cachedPods),
		Client: controllers.ClientOptions(),
	})
	if err != nil {
		setupLog.Error(err, "Unable to create manager")
		os.Exit(1)
	}

	if err := setupTemplates(mgr); err != nil {
		setupLog.Error(err, "Unable to set up template handling", "kind", "S3GWRemediationTemplate")
		os.Exit(1)
	}
	image, from := prePullImage(context.Background(), mgr.GetAPIReader(), os.Getenv, os.Hostname)
	setupLog.Info("Pre-pull pods' image", "image", image, "from", from)
	if err := controllers.SetupReconcilers(context.Background(), mgr, controllers.Wiring{
		WorkloadCache:          cachedPods,
		Metrics:                metrics.Default,
		NodeMonitorGracePeriod: nodeMonitorGracePeriod,
		ReportInterval:         reportInterval,
		PrePullImage:           image,
		ImagePullEstimate:      imagePullEstimate,
	}); err != nil {
		setupLog.Error(err, "Unable to set up the controllers")
		os.Exit(1)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "Unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "Unable to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("Starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "Problem running manager")
		os.Exit(1)
	}
}
