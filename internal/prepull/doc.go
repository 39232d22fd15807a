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

// Package prepull decides, without I/O, how the gateways' images are kept
// warm on the nodes their replacements may be scheduled to
// (docs/warm-replacement.md):
//
//   - which gateway a pod belongs to (GatewayOf) and what of it to copy
//     (Home: its pod on a node);
//   - the DaemonSet that keeps the gateway's images on those nodes
//     (DaemonSet), and what to create, update or delete (Plan);
//   - which nodes a replacement may be scheduled to (Candidates);
//   - how warm they are, from the pre-pull pods' status (Assess).
//
// The controller (controllers/prepull) reads and writes; the protection
// report (controllers/protection) reads the warmth.
package prepull
