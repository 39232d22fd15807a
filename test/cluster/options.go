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
	"errors"
	"fmt"
	"strings"
	"time"
)

// Timing profile names, printed by Describe so that every result says which
// clocks produced it.
const (
	ProfileKubernetesDefaults = "kubernetes-defaults"
	ProfileCompressed         = "compressed"
)

// Options configure a local cluster. Start fills zero values from
// KubernetesDefaults, so Options{} is a cluster with upstream timings.
type Options struct {
	// Profile names the timing preset, for Describe. Changing a timing field
	// by hand turns it into "<profile>+custom".
	Profile string

	// BinDir holds kube-apiserver, kube-controller-manager, kube-scheduler,
	// kubectl and etcd. Empty means <repo>/bin/k8s.
	BinDir string
	// KwokBinary is the kwok executable. Empty means <repo>/bin/kwok.
	KwokBinary string
	// LogDir keeps the component logs after Stop. Empty means the logs live
	// in the cluster's temporary directory and are removed with it.
	LogDir string
	// StartTimeout bounds how long each component may take to become ready.
	StartTimeout time.Duration
	// AuditPolicy, if set, is a kube-apiserver audit Policy (YAML); the
	// requests it selects are logged to Cluster.AuditLogPath, so tests can
	// count the writes a client really made.
	AuditPolicy string

	// NodeMonitorGracePeriod is how long the node-lifecycle controller
	// waits without a heartbeat before it marks a node Unknown and taints it
	// (kube-controller-manager --node-monitor-grace-period).
	NodeMonitorGracePeriod time.Duration
	// NodeMonitorPeriod is how often the node-lifecycle controller checks
	// heartbeats (kube-controller-manager --node-monitor-period).
	NodeMonitorPeriod time.Duration
	// NodeLeaseDuration is the Lease duration kwok sets for every node; like
	// the kubelet it renews the Lease every quarter of it. It must stay well
	// below NodeMonitorGracePeriod or healthy nodes flap.
	NodeLeaseDuration time.Duration
	// DefaultNotReadyTolerationSeconds and DefaultUnreachableTolerationSeconds
	// are the tolerations the DefaultTolerationSeconds admission plugin adds
	// to every pod: how long a pod stays bound to a failed node before the
	// taint-eviction controller deletes it.
	DefaultNotReadyTolerationSeconds    int64
	DefaultUnreachableTolerationSeconds int64
	// AttachDetachReconcileSyncPeriod is how often the attach-detach
	// controller re-verifies attached volumes; a VolumeAttachment deleted
	// behind its back is noticed only then.
	AttachDetachReconcileSyncPeriod time.Duration
	// DisableForceDetachOnTimeout turns off the attach-detach controller's
	// 6-minute force detach from unhealthy nodes.
	DisableForceDetachOnTimeout bool
	// TerminatedPodGCThreshold is the number of terminated pods Pod GC keeps.
	// (Pod GC's 20 s sweep for orphaned and out-of-service pods is fixed.)
	TerminatedPodGCThreshold int

	// Users are extra static-token users, each an admin (system:masters),
	// for clients whose requests must be told apart from the rest; connect
	// as one with RESTConfigFor or KubeconfigFor.
	Users []string
	// AuditLog makes kube-apiserver record every request at the Metadata
	// level (who, verb, resource, response code; no bodies) in
	// Cluster.AuditLogPath, so that a test or benchmark can count one
	// client's requests exactly (package test/apiaudit). Node Lease renewals,
	// most of a large cluster's traffic and all of it kwok's, are left out.
	AuditLog bool
}

// KubernetesDefaults returns the timings of an untuned Kubernetes 1.37
// cluster with kubelet defaults: NotReady after 50 s, eviction 300 s later.
func KubernetesDefaults() Options {
	return Options{
		Profile:                             ProfileKubernetesDefaults,
		NodeMonitorGracePeriod:              50 * time.Second,
		NodeMonitorPeriod:                   5 * time.Second,
		NodeLeaseDuration:                   40 * time.Second,
		DefaultNotReadyTolerationSeconds:    300,
		DefaultUnreachableTolerationSeconds: 300,
		AttachDetachReconcileSyncPeriod:     time.Minute,
		TerminatedPodGCThreshold:            12500,
	}
}

// Compressed returns timings for fast tests and demos: a lost node is
// NotReady after 10 s and its pods are evicted 10 s later. Only the
// failure-detection and eviction clocks are shortened; the attach-detach
// controller keeps its defaults so that volume release routes compare as
// they would in production.
func Compressed() Options {
	o := KubernetesDefaults()
	o.Profile = ProfileCompressed
	o.NodeMonitorGracePeriod = 10 * time.Second
	o.NodeMonitorPeriod = time.Second
	o.NodeLeaseDuration = 4 * time.Second
	o.DefaultNotReadyTolerationSeconds = 10
	o.DefaultUnreachableTolerationSeconds = 10
	return o
}

// withDefaults fills zero timing fields from KubernetesDefaults.
func (o Options) withDefaults() Options {
	d := KubernetesDefaults()
	if o.Profile == "" {
		o.Profile = d.Profile
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.NodeMonitorGracePeriod == 0 {
		o.NodeMonitorGracePeriod = d.NodeMonitorGracePeriod
	}
	if o.NodeMonitorPeriod == 0 {
		o.NodeMonitorPeriod = d.NodeMonitorPeriod
	}
	if o.NodeLeaseDuration == 0 {
		o.NodeLeaseDuration = d.NodeLeaseDuration
	}
	if o.DefaultNotReadyTolerationSeconds == 0 {
		o.DefaultNotReadyTolerationSeconds = d.DefaultNotReadyTolerationSeconds
	}
	if o.DefaultUnreachableTolerationSeconds == 0 {
		o.DefaultUnreachableTolerationSeconds = d.DefaultUnreachableTolerationSeconds
	}
	if o.AttachDetachReconcileSyncPeriod == 0 {
		o.AttachDetachReconcileSyncPeriod = d.AttachDetachReconcileSyncPeriod
	}
	if o.TerminatedPodGCThreshold == 0 {
		o.TerminatedPodGCThreshold = d.TerminatedPodGCThreshold
	}
	return o
}

// validate rejects timings that make healthy nodes flap, and user names
// the token file cannot hold.
func (o Options) validate() error {
	if o.AuditLog && o.AuditPolicy != "" {
		return errors.New("set AuditLog or AuditPolicy, not both")
	}
	seen := map[string]bool{adminUser: true, kwokUser: true}
	for _, u := range o.Users {
		if u == "" || strings.ContainsAny(u, ",\"\n") || seen[u] {
			return fmt.Errorf("invalid or repeated user name %q", u)
		}
		seen[u] = true
	}
	if renew := o.NodeLeaseDuration / 4; renew*2 > o.NodeMonitorGracePeriod {
		return fmt.Errorf("node lease renew interval %s (a quarter of NodeLeaseDuration) must be at most half of NodeMonitorGracePeriod %s",
			renew, o.NodeMonitorGracePeriod)
	}
	return nil
}

// timingFields are the clocks of Options, comparable to tell a preset from
// a tuned one.
type timingFields struct {
	NodeMonitorGracePeriod, NodeMonitorPeriod, NodeLeaseDuration          time.Duration
	DefaultNotReadyTolerationSeconds, DefaultUnreachableTolerationSeconds int64
	AttachDetachReconcileSyncPeriod                                       time.Duration
	DisableForceDetachOnTimeout                                           bool
	TerminatedPodGCThreshold                                              int
}

// timings returns the timing fields only.
func (o Options) timings() timingFields {
	return timingFields{
		NodeMonitorGracePeriod:              o.NodeMonitorGracePeriod,
		NodeMonitorPeriod:                   o.NodeMonitorPeriod,
		NodeLeaseDuration:                   o.NodeLeaseDuration,
		DefaultNotReadyTolerationSeconds:    o.DefaultNotReadyTolerationSeconds,
		DefaultUnreachableTolerationSeconds: o.DefaultUnreachableTolerationSeconds,
		AttachDetachReconcileSyncPeriod:     o.AttachDetachReconcileSyncPeriod,
		DisableForceDetachOnTimeout:         o.DisableForceDetachOnTimeout,
		TerminatedPodGCThreshold:            o.TerminatedPodGCThreshold,
	}
}

// Describe says which timings are in force, in one line, for every printed
// result: failover numbers mean nothing without the clocks behind them.
func (o Options) Describe() string {
	o = o.withDefaults()
	profile := o.Profile
	for _, preset := range []Options{KubernetesDefaults(), Compressed()} {
		if preset.Profile == o.Profile && preset.timings() != o.timings() {
			profile += "+custom"
		}
	}
	forceDetach := "after 6m0s"
	if o.DisableForceDetachOnTimeout {
		forceDetach = "disabled"
	}
	fields := []string{
		"timings=" + profile,
		"node-monitor-grace-period=" + o.NodeMonitorGracePeriod.String(),
		"node-monitor-period=" + o.NodeMonitorPeriod.String(),
		fmt.Sprintf("node-lease=%s(renew %s)", o.NodeLeaseDuration, o.NodeLeaseDuration/4),
		fmt.Sprintf("not-ready-toleration=%ds", o.DefaultNotReadyTolerationSeconds),
		fmt.Sprintf("unreachable-toleration=%ds", o.DefaultUnreachableTolerationSeconds),
		"attach-detach-sync=" + o.AttachDetachReconcileSyncPeriod.String(),
		"force-detach=" + forceDetach,
	}
	return strings.Join(fields, " ")
}
