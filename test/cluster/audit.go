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
	"os"
	"path/filepath"
)

// auditPolicy records every request once (when its response is complete)
// with its metadata, except node Lease renewals: at 1 000 nodes they are a
// hundred requests a second, all kwok's, and no client under test makes
// them. A watch is recorded when it ends, under the audit ID and received
// time of its start.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: None
  namespaces: [kube-node-lease]
  resources:
  - group: coordination.k8s.io
    resources: [leases]
- level: Metadata
`

// auditFiles are where the policy and the log go.
type auditFiles struct{ policy, log string }

// writeAuditPolicy writes the policy into dir and names the log in logDir.
func writeAuditPolicy(dir, logDir string) (auditFiles, error) {
	f := auditFiles{policy: filepath.Join(dir, "audit-policy.yaml"), log: filepath.Join(logDir, "audit.log")}
	if err := os.WriteFile(f.policy, []byte(auditPolicy), 0o644); err != nil {
		return auditFiles{}, fmt.Errorf("writing the audit policy: %w", err)
	}
	return f, nil
}

// args are kube-apiserver's audit flags. The log backend writes each event
// before the response goes out (blocking mode, its default), so a request
// is in the log once its client has the answer; no rotation, so one file
// holds the whole run.
func (f auditFiles) args() []string {
	if f.policy == "" {
		return nil
	}
	return []string{
		"--audit-policy-file=" + f.policy,
		"--audit-log-path=" + f.log,
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=0",
	}
}

// AuditLogPath is kube-apiserver's audit log, or "" without
// Options.AuditLog. It lives in LogDir, so it outlives Stop only if
// Options.LogDir is set.
func (c *Cluster) AuditLogPath() string { return c.audit.log }
