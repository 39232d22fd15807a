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

package e2e

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// ServerVersion reads the API server's /version.
func ServerVersion(cfg *rest.Config) (version.Info, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return version.Info{}, err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return version.Info{}, fmt.Errorf("reading /version: %w", err)
	}
	return *v, nil
}

// Unstamped reports whether a /version answer is that of a build without
// version ldflags (v0.0.0-master+$Format:%H$), which OLM's minKubeVersion
// check can never accept.
func Unstamped(v version.Info) bool { return strings.HasPrefix(v.GitVersion, "v0.0.0") }
