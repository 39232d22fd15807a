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

// Package storage observes, for both reconcilers, what the API shows of the
// s3gw pods' storage: the pods themselves (from the cache when it holds the
// spec's pods, else uncached), each volume's Longhorn Volume, tickets and
// replicas, and the nodes the replicas live on (Longhorn Node readiness and
// kubelet Lease). It reads and converts into failover's facts; it judges
// nothing: whether a replica's node is reachable is failover's rule
// (failover.ReplicaNode.Reach).
package storage
