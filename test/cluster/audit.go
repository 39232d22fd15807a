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

// requestAuditPolicy records every request once (when its response is complete)
// with its metadata, except node Lease renewals: at 1 000 nodes they are a
// hundred requests a second, all kwok's, and no client under test makes
// them. A watch is recorded when it ends, under the audit ID and received
// time of its start.
const requestAuditPolicy = `apiVersion: audit.k8s.io/v1
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

// auditPolicy is the policy kube-apiserver runs with: Options.AuditPolicy,
// else requestAuditPolicy with Options.AuditLog, else none.
func (o Options) auditPolicy() string {
	if o.AuditPolicy == "" && o.AuditLog {
		return requestAuditPolicy
	}
	return o.AuditPolicy
}
