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
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// workers is how many objects each simulated controller handles at once,
// as each of longhorn-manager's controllers does on every node
// (controller/controller_manager.go StartControllers, Workers = 5; a
// cluster has one manager per node, so upstream runs more in all). With
// one, the volumes released together at scale queue behind each other.
const workers = 5

// conflictRetryInterval is how soon a write that lost an optimistic-lock
// race is retried.
const conflictRetryInterval = 100 * time.Millisecond

// Simulator is a running simulated Longhorn and kubelet volume manager.
type Simulator struct {
	opts   Options
	client client.Client // uncached, for helpers that read their own writes
	stop   context.CancelFunc
	done   chan struct{}
	err    error
}

// Scheme returns a scheme with the built-in types and Longhorn's views.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering built-in types: %w", err)
	}
	if err := longhorn.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering Longhorn types: %w", err)
	}
	return s, nil
}

// Start installs Longhorn's CRDs, namespace, CSIDriver and StorageClass into
// the cluster behind cfg and runs the simulated controllers until ctx is
// cancelled or Stop is called. It returns once their caches are in sync.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Simulator, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	if err := install(ctx, c, opts.CRDDir); err != nil {
		return nil, err
	}

	log := logr.FromContextOrDiscard(ctx).WithName("longhornsim")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller: config.Controller{
			// Several simulators may run one after another in one test binary.
			SkipNameValidation:      ptr.To(true),
			MaxConcurrentReconciles: workers,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := setupControllers(ctx, mgr, opts); err != nil {
		return nil, err
	}
	// Creating the informers now makes WaitForCacheSync below cover them,
	// so that Start returns with every controller about to run.
	for _, obj := range watchedTypes() {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return nil, fmt.Errorf("creating informer for %T: %w", obj, err)
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	s := &Simulator{opts: opts, client: c, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = mgr.Start(runCtx)
	}()
	if !mgr.GetCache().WaitForCacheSync(runCtx) {
		cancel()
		<-s.done
		return nil, errors.Join(errors.New("simulator caches did not sync"), s.err)
	}
	log.Info("Started simulated Longhorn", "settings", opts.Describe())
	return s, nil
}

func setupControllers(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := addIndexes(ctx, mgr); err != nil {
		return err
	}
	c := mgr.GetClient()
	setups := []func(ctrl.Manager) error{
		(&nodeReconciler{client: c, now: time.Now}).setupWithManager,
		(&volumeReconciler{client: c, attachDelay: opts.AttachDelay, now: time.Now, attachingSince: map[string]time.Time{}}).setupWithManager,
		(&attacherReconciler{client: c}).setupWithManager,
		(&kubeletReconciler{client: c}).setupWithManager,
		(&instanceManagerReconciler{client: c}).setupWithManager,
	}
	if opts.NodeDownPodDeletionPolicy == PolicyDeleteDeploymentPod {
		setups = append(setups, (&podDeletionPolicyReconciler{client: c, now: time.Now, namespaces: opts.NodeDownPodDeletionPolicyNamespaces}).setupWithManager)
	}
	for _, setup := range setups {
		if err := setup(mgr); err != nil {
			return fmt.Errorf("setting up simulated controller: %w", err)
		}
	}
	return nil
}

// watchedTypes are the kinds the simulated controllers watch.
func watchedTypes() []client.Object {
	return []client.Object{
		&corev1.Node{}, &corev1.Pod{}, &storagev1.VolumeAttachment{},
		&longhorn.Node{}, &longhorn.Volume{}, &longhorn.VolumeAttachment{}, &longhorn.Engine{}, &longhorn.Replica{},
		&longhorn.InstanceManager{},
	}
}

// Stop ends the simulated controllers and waits for them to return.
func (s *Simulator) Stop() error {
	s.stop()
	<-s.done
	return s.err
}

// Client returns an uncached client that knows Longhorn's types.
func (s *Simulator) Client() client.Client { return s.client }

// Options returns the options in force, defaults filled in.
func (s *Simulator) Options() Options { return s.opts }

// Describe says how the simulated Longhorn behaves; see Options.Describe.
func (s *Simulator) Describe() string { return s.opts.Describe() }
