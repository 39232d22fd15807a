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

// Package controllers wires the s3gw-remediation reconcilers to the API:
// the manager's cache options (CacheOptions) and, under the names the
// manager uses, the reconcilers, each in a package of its own as in
// cluster-api:
//
//   - remediation drives one S3GWRemediation through observe → decide →
//     act: it reads the node, the s3gw pods, their volumes and the fencing
//     evidence through adapters under internal/, asks the pure
//     failover.Decide for the next step, performs it, derives the status and
//     writes it once per pass, then tells what changed;
//   - protection keeps each S3GWRemediationTemplate's protection report;
//   - template marks templates as supporting multiple instances so
//     NodeHealthCheck can escalate through several of them.
//
// The envtest stories of this package run all three against a real
// kube-apiserver and etcd.
package controllers
