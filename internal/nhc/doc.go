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

// Package nhc emulates NodeHealthCheck's side of the medik8s remediation
// contract for tests and the local cluster: it creates remediation CRs from
// a template exactly as NHC does (name or generateName, node-name and
// template-name annotations, part-of label, a non-controller owner reference
// to a NodeHealthCheck, a node lease), marks them timed out with a metadata
// Update, and deletes them when the node is healthy or gone. It never writes
// status and never removes finalizers.
//
// Emulator is the step-by-step API for tests; Controller runs it against a
// cluster, watching nodes like NHC with its default unhealthy conditions.
package nhc
