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

package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// stopGrace is how long a component may take to exit after SIGTERM.
const stopGrace = 10 * time.Second

// Cluster is a running local control plane with kwok-simulated nodes.
type Cluster struct {
	// KubeconfigPath is an admin kubeconfig for kubectl and other tools.
	KubeconfigPath string

	opts       Options
	dir        string
	logDir     string
	creds      *credentials
	kubectl    string
	client     client.Client
	components []*component // in start order

	stopOnce        sync.Once
	stopErr         error
	stopOnCtxCancel func() bool
}

// Start boots etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and kwok on loopback, each waited for until it reports healthy, and
// returns once the cluster accepts workloads. Cancelling ctx stops the
// cluster, as does Stop. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("invalid cluster options: %w", err)
	}
	bins, err := findBinaries(opts)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "s3gw-local-cluster-")
	if err != nil {
		return nil, fmt.Errorf("creating cluster directory: %w", err)
	}
	c := &Cluster{opts: opts, dir: dir, logDir: opts.LogDir}
	if c.logDir == "" {
		c.logDir = filepath.Join(dir, "logs")
	}
	// kubectl is optional: only Kubectl needs it.
	if checkExecutable(bins.kubectl) == nil {
		c.kubectl = bins.kubectl
	}
	if err := c.boot(ctx, bins); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	c.stopOnCtxCancel = context.AfterFunc(ctx, func() { _ = c.Stop() })
	return c, nil
}

// boot starts the components in dependency order.
func (c *Cluster) boot(ctx context.Context, bins binaries) error {
	log := logr.FromContextOrDiscard(ctx).WithValues("dir", c.dir)
	began := time.Now()
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		return fmt.Errorf("creating log directory: %w", err)
	}
	p, err := allocatePorts()
	if err != nil {
		return err
	}
	if c.creds, err = writeCredentials(c.dir, p.apiserver, c.opts.Users); err != nil {
		return err
	}
	c.KubeconfigPath = c.creds.kubeconfig
	stagePaths, err := writeStages(filepath.Join(c.dir, "kwok-stages"))
	if err != nil {
		return err
	}
	if policy := c.opts.auditPolicy(); policy != "" {
		if err := writeFiles(map[string][]byte{auditPolicyPath(c.dir): []byte(policy)}); err != nil {
			return err
		}
	}
	apiserverClient, err := verifyingHTTPClient(c.creds.caCertPEM)
	if err != nil {
		return err
	}

	c.components = []*component{
		{name: Etcd, binary: bins.etcd, args: etcdArgs(c.dir, p),
			ready: httpProbe(plainHTTPClient(), fmt.Sprintf("http://127.0.0.1:%d/health", p.etcdClient), "", `"health":"true"`)},
		{name: APIServer, binary: bins.apiserver, args: apiserverArgs(c.dir, c.logDir, p, c.creds, c.opts),
			ready: httpProbe(apiserverClient, c.creds.apiserverHost+"/readyz", c.creds.adminToken, "ok")},
		{name: "kube-controller-manager", binary: bins.controllerManager, args: controllerManagerArgs(p, c.creds, c.opts),
			ready: httpProbe(selfSignedHTTPClient(), fmt.Sprintf("https://127.0.0.1:%d/healthz", p.controllerManager), "", "ok")},
		{name: "kube-scheduler", binary: bins.scheduler, args: schedulerArgs(p, c.creds),
			ready: httpProbe(selfSignedHTTPClient(), fmt.Sprintf("https://127.0.0.1:%d/healthz", p.scheduler), "", "ok")},
		// HOME points into the cluster directory so that kwok ignores any
		// ~/.kwok/kwok.yaml of the person running the tests.
		{name: "kwok", binary: bins.kwok, args: kwokArgs(c.creds.kwokKubeconfig, stagePaths, p.kwok, c.opts), env: []string{"HOME=" + c.dir},
			ready: httpProbe(plainHTTPClient(), fmt.Sprintf("http://127.0.0.1:%d/healthz", p.kwok), "", "ok")},
	}
	for _, comp := range c.components {
		log.V(1).Info("Starting component", "component", comp.name)
		if err := c.launch(ctx, comp); err != nil {
			return err
		}
	}

	if c.client, err = client.New(c.RESTConfig(), client.Options{Scheme: clientgoscheme.Scheme}); err != nil {
		return fmt.Errorf("creating cluster client: %w", err)
	}
	if err := c.fenceUnmanagedNodes(ctx); err != nil {
		return err
	}
	// The ServiceAccount admission plugin rejects pods until the default
	// ServiceAccount exists, so the cluster is usable only after
	// kube-controller-manager has created it.
	if err := c.waitForDefaultServiceAccount(ctx, corev1.NamespaceDefault); err != nil {
		return c.component("kube-controller-manager").process().Failure(fmt.Errorf("controllers not running: %w", err))
	}
	log.Info("Started local cluster", "took", time.Since(began).Round(time.Millisecond), "timings", c.opts.Describe())
	return nil
}

func (c *Cluster) waitForDefaultServiceAccount(ctx context.Context, namespace string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, c.opts.StartTimeout, true, func(ctx context.Context) (bool, error) {
		err := c.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
}

// RESTConfig returns a fresh admin client configuration.
func (c *Cluster) RESTConfig() *rest.Config {
	return c.restConfig(c.creds.adminToken)
}

// RESTConfigFor returns a fresh client configuration for one of
// Options.Users.
func (c *Cluster) RESTConfigFor(user string) (*rest.Config, error) {
	token, ok := c.creds.userTokens[user]
	if !ok {
		return nil, fmt.Errorf("no user %q: add it to cluster.Options.Users", user)
	}
	return c.restConfig(token), nil
}

// KubeconfigFor writes a kubeconfig for one of Options.Users into the
// cluster directory and returns its path, for a client that runs as a
// process of its own.
func (c *Cluster) KubeconfigFor(user string) (string, error) {
	token, ok := c.creds.userTokens[user]
	if !ok {
		return "", fmt.Errorf("no user %q: add it to cluster.Options.Users", user)
	}
	path := filepath.Join(c.dir, user+".kubeconfig")
	return path, c.creds.writeKubeconfigFor(path, user, token)
}

func (c *Cluster) restConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            c.creds.apiserverHost,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.creds.caCertPEM},
		// Tests and simulators issue bursts of requests; the client-side
		// default of 5 QPS would throttle them and distort timings.
		QPS:   200,
		Burst: 400,
	}
}

// Client returns an admin client for built-in Kubernetes types.
func (c *Cluster) Client() client.Client { return c.client }

// Options returns the options in force, defaults filled in.
func (c *Cluster) Options() Options { return c.opts }

// Describe says which timings are in force; see Options.Describe.
func (c *Cluster) Describe() string { return c.opts.Describe() }

// AuditLogPath is kube-apiserver's audit log (JSON lines), written when
// Options.AuditPolicy is set; it lives with the component logs.
func (c *Cluster) AuditLogPath() string { return auditLogPath(c.logDir) }

// LogDir is where the component logs are written.
func (c *Cluster) LogDir() string { return c.logDir }

// Stop ends every component (SIGTERM, then SIGKILL after 10 s) and removes
// the cluster directory, keeping logs only if Options.LogDir was set. The
// clients of kube-apiserver go first so that they do not log its absence,
// then kube-apiserver, then etcd. Stop is idempotent and safe to defer.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		if c.stopOnCtxCancel != nil {
			c.stopOnCtxCancel()
		}
		var clients, servers []*Process
		for _, comp := range c.components {
			proc := comp.process()
			if proc == nil {
				continue // never started
			}
			switch comp.name {
			case Etcd, APIServer:
				servers = append(servers, proc)
			default:
				clients = append(clients, proc)
			}
		}
		var wg sync.WaitGroup
		for _, proc := range clients {
			wg.Go(func() { proc.Stop(stopGrace) })
		}
		wg.Wait()
		for i := len(servers) - 1; i >= 0; i-- {
			servers[i].Stop(stopGrace)
		}
		if err := os.RemoveAll(c.dir); err != nil {
			c.stopErr = fmt.Errorf("removing cluster directory: %w", err)
		}
	})
	return c.stopErr
}

func (c *Cluster) component(name string) *component {
	for _, comp := range c.components {
		if comp.name == name {
			return comp
		}
	}
	panic("unknown component " + name)
}

// processIDs lists the process (and process group) ids of the components,
// for tests that prove nothing outlives Stop.
func (c *Cluster) processIDs() []int {
	pids := make([]int, 0, len(c.components))
	for _, comp := range c.components {
		if proc := comp.process(); proc != nil {
			pids = append(pids, proc.Pid())
		}
	}
	return pids
}
