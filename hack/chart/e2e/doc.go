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

// Package e2e installs the operator as its users do, on the local cluster
// (test/cluster: real etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, kwok kubelets, simulated Longhorn) whose three nodes are
// all k3s servers: `helm install` of charts/s3gw-remediation-crd and of
// charts/s3gw-remediation with its default values through the Helm SDK,
// and `kubectl apply --server-side -f` of dist/. It then runs the manager,
// built from cmd/manager, under the ServiceAccount and RBAC that install
// made, with the NodeHealthCheck that install made, through one server's
// failure, and puts a stand-in of s3gw's chart behind contrib/s3gw-placement
// (a new s3gw, and one moved with move-claim.sh) to see the protection
// report change.
//
// The tests carry the build tag e2e (`make test-install`). What they do
// not prove: that the image starts (kwok only reports the Deployment's
// pods Running, and the manager runs as a process next to them), that
// the chart-generated webhook certificate is served (no container serves
// it), and anything of s3gw's own chart beyond the shape the stand-in
// copies (testdata/s3gw-standin).
package e2e
