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

package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers"
	"github.com/s3gw-tech/s3gw-remediation/internal/metrics"
)

// runner is a controller-runtime manager running in the background.
type runner struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// newManager returns a manager without servers, as several run in one
// process.
func newManager(cfg *rest.Config, log logr.Logger) (manager.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 Scheme(),
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		// As cmd/manager: cached objects are only read, and trimmed.
		Cache:  controllers.CacheOptions(controllers.DefaultWorkloadCache()),
		Client: controllers.ClientOptions(),
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	return mgr, nil
}

// run starts mgr and returns once the informers of watched are in sync, so
// that every controller is about to run.
func run(ctx context.Context, mgr manager.Manager, watched ...client.Object) (*runner, error) {
	for _, obj := range watched {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return nil, fmt.Errorf("creating informer for %T: %w", obj, err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	r := &runner{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = mgr.Start(runCtx)
	}()
	if !mgr.GetCache().WaitForCacheSync(runCtx) {
		cancel()
		<-r.done
		return nil, errors.Join(errors.New("manager caches did not sync"), r.err)
	}
	return r, nil
}

func (r *runner) stop() error {
	r.cancel()
	<-r.done
	return r.err
}

// startOperator runs the operator as cmd/manager wires it, with admin
// rights (its RBAC is tested in test/manifests) and a private metrics
// registry.
func startOperator(ctx context.Context, cfg *rest.Config, log logr.Logger, intervals *controllers.Intervals,
	nodeMonitorGracePeriod time.Duration) (*runner, error) {
	mgr, err := newManager(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := controllers.SetupReconcilers(ctx, mgr, controllers.Wiring{
		WorkloadCache:          controllers.DefaultWorkloadCache(),
		Metrics:                metrics.New(prometheus.NewRegistry()),
		Intervals:              intervals,
		NodeMonitorGracePeriod: nodeMonitorGracePeriod,
		ReportInterval:         controllers.DefaultReportInterval,
		PrePullImage:           OperatorImage,
	}); err != nil {
		return nil, err
	}
	return run(ctx, mgr, &s3gwv1alpha1.S3GWRemediation{}, &s3gwv1alpha1.S3GWRemediationTemplate{},
		&corev1.Node{}, &storagev1.VolumeAttachment{})
}
