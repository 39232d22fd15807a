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
	"fmt"
	"path/filepath"
	"strconv"
)

// bindLoopback keeps every component on loopback only.
const bindLoopback = "--bind-address=127.0.0.1"

// ports are the loopback ports of one cluster.
type ports struct {
	etcdClient, etcdPeer, apiserver, controllerManager, scheduler, kwok int
}

func allocatePorts() (ports, error) {
	p, err := FreePorts(6)
	if err != nil {
		return ports{}, err
	}
	return ports{etcdClient: p[0], etcdPeer: p[1], apiserver: p[2], controllerManager: p[3], scheduler: p[4], kwok: p[5]}, nil
}

// etcdArgs runs a single-member etcd without fsync: the data is thrown away
// with the cluster, and fsync on a busy 2-core machine only adds latency.
func etcdArgs(dir string, p ports) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", p.etcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", p.etcdPeer)
	return []string{
		"--name=local",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=local=" + peer,
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

// apiserverArgs serves on loopback with the cluster's own PKI, static-token
// admin authentication and RBAC. The default toleration seconds are the
// clock of taint-based eviction. With an audit policy it logs the requests
// the policy selects to logDir/audit.log.
func apiserverArgs(dir, logDir string, p ports, c *credentials, o Options) []string {
	args := []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", p.etcdClient),
		bindLoopback,
		"--advertise-address=127.0.0.1",
		// Nothing reaches the API server through the kubernetes Service, and
		// the default reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(p.apiserver),
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file=" + c.servingCert,
		"--tls-private-key-file=" + c.servingKey,
		"--token-auth-file=" + c.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.saPublicKey,
		"--service-account-signing-key-file=" + c.saPrivateKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		fmt.Sprintf("--default-not-ready-toleration-seconds=%d", o.DefaultNotReadyTolerationSeconds),
		fmt.Sprintf("--default-unreachable-toleration-seconds=%d", o.DefaultUnreachableTolerationSeconds),
	}
	if o.auditPolicy() != "" {
		// The log backend writes each event before the response goes out
		// (blocking mode, its default), so a request is in the log once its
		// client has the answer; no rotation, so one file holds the run.
		args = append(args, "--audit-policy-file="+auditPolicyPath(dir), "--audit-log-path="+auditLogPath(logDir),
			"--audit-log-format=json", "--audit-log-mode=blocking", "--audit-log-maxsize=0")
	}
	return args
}

func auditPolicyPath(dir string) string { return filepath.Join(dir, "audit-policy.yaml") }
func auditLogPath(logDir string) string { return filepath.Join(logDir, "audit.log") }

// controllerManagerArgs runs every controller (node lifecycle, taint
// eviction, attach-detach, Pod GC, workload controllers, garbage
// collector) with the timing knobs of Options.
func controllerManagerArgs(p ports, c *credentials, o Options) []string {
	return []string{
		"--kubeconfig=" + c.kubeconfig,
		"--authentication-kubeconfig=" + c.kubeconfig,
		"--authorization-kubeconfig=" + c.kubeconfig,
		bindLoopback,
		"--secure-port=" + strconv.Itoa(p.controllerManager),
		"--controllers=*",
		"--leader-elect=false",
		"--service-account-private-key-file=" + c.saPrivateKey,
		"--root-ca-file=" + c.caCertFile,
		"--node-monitor-grace-period=" + o.NodeMonitorGracePeriod.String(),
		"--node-monitor-period=" + o.NodeMonitorPeriod.String(),
		"--attach-detach-reconcile-sync-period=" + o.AttachDetachReconcileSyncPeriod.String(),
		"--disable-force-detach-on-timeout=" + strconv.FormatBool(o.DisableForceDetachOnTimeout),
		"--terminated-pod-gc-threshold=" + strconv.Itoa(o.TerminatedPodGCThreshold),
	}
}

func schedulerArgs(p ports, c *credentials) []string {
	return []string{
		"--kubeconfig=" + c.kubeconfig,
		"--authentication-kubeconfig=" + c.kubeconfig,
		"--authorization-kubeconfig=" + c.kubeconfig,
		bindLoopback,
		"--secure-port=" + strconv.Itoa(p.scheduler),
		"--leader-elect=false",
	}
}
