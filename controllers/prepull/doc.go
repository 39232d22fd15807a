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

// Package prepull is the reconciler that keeps, for every gateway a
// template with spec.prePull.enabled selects, a DaemonSet in the gateway's
// namespace whose tiny pods hold the gateway's images on the nodes its
// replacement may be scheduled to (docs/warm-replacement.md). What the
// DaemonSet is and how warm its nodes are is decided in internal/prepull;
// this package reads, writes and caches.
package prepull
