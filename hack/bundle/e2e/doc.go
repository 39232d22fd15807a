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

// Package e2e proves that the committed bundle/ installs through a real
// Operator Lifecycle Manager (OLM v0) on the project's local cluster
// (test/cluster: real etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, kubelets simulated by kwok).
//
// TestInstallsThroughOLM (build tag e2e, `make test-olm`) runs OLM's olm
// operator (bin/olm, built from operator-lifecycle-manager v0.38.0) as a
// child process and installs the bundle without a catalog: the local cluster
// runs no containers, so neither a catalog's registry pod nor the bundle
// unpack Job can run, and OLM's catalog operator is not part of the proof.
// This package plays the catalog operator's part instead: InstallPlanObjects
// derives, from the bundle, exactly the objects an InstallPlan creates (the
// CRDs, the CSV, the bundle's other manifests, and the ServiceAccount and
// RBAC of the CSV's permissions), labelled and owned as the catalog operator
// labels and owns them. Everything after that is OLM's own doing: the
// requirement and permission checks, the install-mode check against the
// OperatorGroup, the Deployment, the OperatorGroup's API ClusterRoles, the
// copied CSVs and the phase Succeeded.
//
// What it does not prove: that the manager image starts (kwok only reports
// its pod Running), or that a catalog image's registry pod runs.
//
// TestUpgradesThroughOLM (`make test-olm-upgrade`) runs OLM's catalog
// operator too (bin/olm-catalog), against a catalog served from the test
// process (Registry, as `opm serve` serves one): the newest published
// release (frozen in hack/bundle/releases) and this tree's bundle as the
// next version. The catalog operator resolves the Subscription along the
// channel (replaces, olm.skipRange) and executes the InstallPlans, the olm
// operator replaces the CSV; the remediation CRs must come through
// unchanged. The bundles' objects travel in the catalog
// (olm.bundle.object), so no bundle image is unpacked.
package e2e
