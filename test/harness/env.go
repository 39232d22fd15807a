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
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/controllers"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/apiaudit"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/far"
	"github.com/s3gw-tech/s3gw-remediation/test/longhornsim"
)

// Namespaces the harness uses for its own objects.
const (
	// TemplateNamespace holds the S3GWRemediationTemplates, hence the
	// S3GWRemediations NHC creates from them.
	TemplateNamespace = "s3gw-remediation-system"
	// FARNamespace is where FAR runs, and holds its templates and their
	// Secrets unless a test puts them elsewhere.
	FARNamespace = "fence-agents-remediation"
	// OperatorUser is the identity the operator authenticates as, in
	// process or as a process of its own: its requests are the ones
	// OperatorRequests counts.
	OperatorUser = "s3gw-remediation-manager"
	// OperatorImage is the operator's image as the pre-pull pods name it
	// (--prepull-image): kwok runs them without pulling it.
	OperatorImage = "quay.io/s3gw/s3gw-remediation:v0.1.0"
)

// FARSecretAccess is where the FAR stand-in may read Secrets.
type FARSecretAccess int

const (
	// FARInstalledByOLM: FAR's CSV supports only the AllNamespaces install
	// mode, for which OLM lifts its Role for Secrets to a ClusterRole; FAR
	// still reads a CR's Secrets from the CR's own namespace only.
	FARInstalledByOLM FARSecretAccess = iota
	// FARInstalledByKustomize: FAR's own RBAC, a Role for Secrets in FAR's
	// namespace.
	FARInstalledByKustomize
)

func (a FARSecretAccess) far() far.SecretAccess {
	if a == FARInstalledByKustomize {
		return far.SecretsInFARNamespace
	}
	return far.SecretsClusterWide
}

// Options configure an Env. The zero value runs everything with upstream
// Kubernetes timings.
type Options struct {
	// Cluster are the control plane's timings and locations.
	Cluster cluster.Options
	// Longhorn configures the simulated Longhorn.
	Longhorn longhornsim.Options
	// NoOperator leaves the operator out: nothing acts on S3GWRemediations.
	NoOperator bool
	// OperatorProcess runs the operator as cmd/manager built and started as
	// an OS process (Env.Manager), instead of in the harness's process, so
	// that its memory and CPU can be measured. Intervals must then be nil:
	// the manager runs with its production intervals.
	OperatorProcess bool
	// AuditLog has kube-apiserver log every request, so that
	// OperatorRequests can count the operator's (cluster.Options.AuditLog).
	AuditLog bool
	// ExternalNHC leaves the NodeHealthCheck emulator and the FAR stand-in
	// out, so that a real NodeHealthCheck operator can run against the
	// cluster; EnableRemediation then only creates the template and the
	// NodeHealthCheck.
	ExternalNHC bool
	// FARSecrets is where FAR may read Secrets: FAR installed by OLM (the
	// zero value) or with its own kustomize RBAC.
	FARSecrets FARSecretAccess
	// FARBootTime is how long a node FAR rebooted takes to be Ready again;
	// zero means 30 s.
	FARBootTime time.Duration
	// UnhealthyDuration is how long a node must be NotReady before NHC
	// creates a remediation, unless EnableRemediation says otherwise. Zero
	// means the cluster's unreachable toleration: NHC's default 300 s
	// equals Kubernetes' default 300 s toleration, and the compressed
	// profile shortens both to 10 s.
	UnhealthyDuration time.Duration
	// ShippedNodeHealthCheck makes EnableRemediation's NodeHealthChecks the
	// shipped one (config/nodehealthcheck), so that a benchmark measures
	// what the chart and dist/ install: its unhealthy conditions, and its
	// selector narrowed to the Remediation's NodeSelector (the pool that
	// keeps scenarios apart). A Remediation's or these Options'
	// UnhealthyDuration, if set, replaces the Ready=Unknown duration only;
	// minHealthy stays 0%, as it gates but does not time a remediation.
	ShippedNodeHealthCheck bool
	// Intervals are the operator's requeue intervals; nil means
	// controllers.DefaultIntervals, the production values.
	Intervals *controllers.Intervals
	// Logger receives the in-process controllers' logs; the zero value
	// discards them.
	Logger logr.Logger
	// InstallOperator, if set, installs the operator as a user would (a
	// Helm chart, dist/install.yaml): its CRDs, the manager's
	// ServiceAccount, RBAC and admission policies, and NodeHealthCheck's
	// ext-remediation ClusterRole, in place of the harness's own from
	// config/. Manager processes then run under that ServiceAccount, which
	// must be ManagerServiceAccount in ManagerNamespace. It runs once the
	// medik8s fixture CRDs are established.
	InstallOperator func(ctx context.Context, c *cluster.Cluster) error
}

// Env is a running cluster with simulated Longhorn, the operator and the
// cluster-side controllers.
type Env struct {
	Cluster *cluster.Cluster
	Sim     *longhornsim.Simulator
	// Client is an uncached admin client that knows the built-in types,
	// the operator's and Longhorn's.
	Client client.Client
	// Manager is the operator's process with Options.OperatorProcess.
	Manager *ManagerProcess

	opts      Options
	log       logr.Logger
	tracker   *tracker
	operator  *runner
	infra     *runner
	farRunner *runner
	nhc       *nhcDispatcher
	far       *far.Controller
	oosFencer *oosFencer
	// floorReleaser frees nodes at NotReady (EnableReleaseAtNotReady).
	floorReleaser *floorReleaser
	// powerDir holds fence_dummy's power status files, one per node.
	powerDir string

	// Manager processes (StartOperatorProcess).
	prepareOnce       sync.Once
	prepareErr        error
	managerBuildDir   string
	managerBinary     string
	managerKubeconfig string
	procMu            sync.Mutex
	processes         []*OperatorProcess

	stopOnce sync.Once
	stopErr  error
}

// Scheme returns the operator's scheme: built-in types, ours and Longhorn's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(s3gwv1alpha1.AddToScheme(s))
	utilruntime.Must(longhorn.AddToScheme(s))
	return s
}

// Start boots the environment. On error nothing is left running; cancelling
// ctx stops everything, as does Stop.
func Start(ctx context.Context, opts Options) (*Env, error) {
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	if opts.OperatorProcess && opts.Intervals != nil {
		return nil, errors.New("the operator process runs with its production intervals: leave Options.Intervals nil")
	}
	opts.Cluster.Users = append(slices.Clone(opts.Cluster.Users), OperatorUser)
	opts.Cluster.AuditLog = opts.Cluster.AuditLog || opts.AuditLog
	e := &Env{opts: opts, log: opts.Logger}
	if err := e.start(logr.NewContext(ctx, e.log)); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	return e, nil
}

func (e *Env) start(ctx context.Context) error {
	began := time.Now()
	var err error
	if e.Cluster, err = cluster.Start(ctx, e.opts.Cluster); err != nil {
		return err
	}
	if e.Sim, err = longhornsim.Start(ctx, e.Cluster.RESTConfig(), e.opts.Longhorn); err != nil {
		return err
	}
	if e.Client, err = client.New(e.Cluster.RESTConfig(), client.Options{Scheme: Scheme()}); err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	if err := e.install(ctx); err != nil {
		return err
	}
	if e.tracker, err = startTracker(ctx, e.Cluster.RESTConfig()); err != nil {
		return err
	}
	switch {
	case e.opts.NoOperator:
	case e.opts.OperatorProcess:
		if e.Manager, err = startManagerProcess(ctx, e.Cluster); err != nil {
			return err
		}
	default:
		cfg, err := e.operatorConfig()
		if err != nil {
			return err
		}
		if e.operator, err = startOperator(ctx, cfg, e.log.WithName("operator"), e.opts.Intervals,
			e.Cluster.Options().NodeMonitorGracePeriod); err != nil {
			return err
		}
	}
	if !e.opts.ExternalNHC {
		if err := e.startClusterSide(ctx); err != nil {
			return err
		}
	}
	e.log.Info("Started failover environment", "took", time.Since(began).Round(time.Millisecond), "settings", e.Describe())
	return nil
}

// Stop ends the in-process controllers, the simulator and the cluster. It is
// idempotent and safe to defer.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		errs := []error{e.stopProcesses()}
		for _, r := range []*runner{e.farRunner, e.infra, e.operator} {
			if r != nil {
				errs = append(errs, r.stop())
			}
		}
		if e.Manager != nil {
			errs = append(errs, e.Manager.stop())
		}
		if e.tracker != nil {
			e.tracker.stop()
		}
		if e.Sim != nil {
			errs = append(errs, e.Sim.Stop())
		}
		if e.Cluster != nil {
			errs = append(errs, e.Cluster.Stop())
		}
		if e.powerDir != "" {
			errs = append(errs, os.RemoveAll(e.powerDir))
		}
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

// StopInProcessOperator stops the in-process operator, so that manager
// processes (StartOperatorProcess) act alone; StartInProcessOperator brings
// it back.
func (e *Env) StopInProcessOperator() error {
	if e.operator == nil {
		return nil
	}
	err := e.operator.stop()
	e.operator = nil
	return err
}

// StartInProcessOperator starts the in-process operator unless it runs or
// Options.NoOperator is set.
func (e *Env) StartInProcessOperator(ctx context.Context) error {
	if e.operator != nil || e.opts.NoOperator {
		return nil
	}
	cfg, err := e.operatorConfig()
	if err != nil {
		return err
	}
	e.operator, err = startOperator(logr.NewContext(ctx, e.log), cfg, e.log.WithName("operator"), e.opts.Intervals,
		e.Cluster.Options().NodeMonitorGracePeriod)
	return err
}

// UnhealthyDuration is the NHC duration EnableRemediation uses by default
// (with ShippedNodeHealthCheck, for Ready=Unknown).
func (e *Env) UnhealthyDuration() time.Duration {
	if e.opts.UnhealthyDuration > 0 {
		return e.opts.UnhealthyDuration
	}
	if e.opts.ShippedNodeHealthCheck {
		return ShippedUnhealthyDuration
	}
	return time.Duration(e.Cluster.Options().DefaultUnreachableTolerationSeconds) * time.Second
}

// Describe says, in one line, which timings and components are in force.
func (e *Env) Describe() string {
	parts := []string{e.Cluster.Describe(), e.Sim.Describe()}
	switch {
	case e.opts.ExternalNHC:
		parts = append(parts, "nhc=external")
	case e.opts.ShippedNodeHealthCheck:
		parts = append(parts, fmt.Sprintf("nhc=emulated(%s, Ready=Unknown %s)", ShippedNodeHealthCheckFile, e.UnhealthyDuration()))
	default:
		parts = append(parts, fmt.Sprintf("nhc=emulated(unhealthy-duration=%s)", e.UnhealthyDuration()))
	}
	switch {
	case e.opts.NoOperator:
		parts = append(parts, "operator=off")
	case e.opts.OperatorProcess:
		iv := controllers.DefaultIntervals()
		parts = append(parts, fmt.Sprintf("operator=process(cmd/manager, requeue fencing=%s release=%s replacement=%s)",
			iv.Fencing, iv.Release, iv.Replacement))
	default:
		iv := controllers.DefaultIntervals()
		if e.opts.Intervals != nil {
			iv = *e.opts.Intervals
		}
		parts = append(parts, fmt.Sprintf("operator=in-process(requeue fencing=%s release=%s replacement=%s)",
			iv.Fencing, iv.Release, iv.Replacement))
	}
	return strings.Join(parts, " ")
}

// operatorConfig is the in-process operator's client configuration: the
// operator's own identity and user agent.
func (e *Env) operatorConfig() (*rest.Config, error) {
	cfg, err := e.Cluster.RESTConfigFor(OperatorUser)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = OperatorUser + " (in-process)"
	return cfg, nil
}

// OperatorRequests counts the operator's API requests received in
// [from, to); it needs Options.AuditLog.
func (e *Env) OperatorRequests(from, to time.Time) (apiaudit.Count, error) {
	reqs, err := e.operatorRequests()
	if err != nil {
		return apiaudit.Count{}, err
	}
	return apiaudit.Tally(apiaudit.Between(reqs, from, to)), nil
}

// operatorRequests reads all of the operator's requests from the audit log.
func (e *Env) operatorRequests() ([]apiaudit.Request, error) {
	path := e.Cluster.AuditLogPath()
	if path == "" {
		return nil, errors.New("no audit log: start the environment with Options.AuditLog")
	}
	return apiaudit.Read(path, apiaudit.ByUser(OperatorUser))
}
