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

package main

import "k8s.io/client-go/rest"

// uncompressed asks the API server for uncompressed responses. The manager
// runs in the cluster next to the API server, where gzip costs CPU on both
// ends and saves no time; kube-controller-manager and kube-scheduler turn
// it off for the same reason. Since Kubernetes 1.37 an informer's initial
// list comes as a compressed watch (WatchListCompression), so each watch
// would also keep a gzip reader and its 32 KiB window for as long as it
// runs (docs/design/manager-memory.md).
func uncompressed(cfg *rest.Config) *rest.Config {
	cfg.DisableCompression = true
	return cfg
}
