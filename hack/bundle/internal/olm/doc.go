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

// Package olm renders the operator's OLM bundle (bundle/, bundle.Dockerfile)
// and file-based catalog (catalog/, catalog.Dockerfile) from the kustomize
// trees under config/, without operator-sdk or opm.
//
// The bundle follows operator-sdk's "generate bundle": config/manifests is
// built with the kustomize API; the Deployment, and the Roles and
// ClusterRoles bound to its ServiceAccount, become the CSV's install
// strategy; CRDs, Services and unbound ClusterRoles become bundle manifests;
// samples of the owned kinds become alm-examples. The catalog is what
// "opm render" makes of that bundle directory, plus an olm.package and an
// olm.channel. Output is a pure function of the inputs and the options, so a
// second run is byte-identical and "make verify" can compare.
package olm
