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

package worldmodel

import "time"

// podGCQuarantine is Pod GC's quarantineTime: how long a Node name must
// stay missing before its pods go.
const podGCQuarantine = 40 * time.Second

// gcOrphaned is Pod GC's gcOrphaned (k8s.io/kubernetes v1.37.2,
// pkg/controller/podgc/gc_controller.go): a pass that finds pods bound to
// a name with no Node queues the name for the quarantine time; a later
// pass past it asks the API server again (discoverDeletedNodes) and
// force-deletes (grace 0) the pods of a name still missing. A Node
// re-created under the name by then saves them. Passes run every 20 s, so
// the pods go 40-60 s after the Node.
func (w *World) gcOrphaned() {
	missing := map[string]bool{}
	for _, p := range w.api.pods() {
		if name := p.Spec.NodeName; name != "" && w.api.node(name) == nil {
			missing[name] = true
		}
	}
	for name := range w.orphanedSince {
		if !missing[name] {
			delete(w.orphanedSince, name)
		}
	}
	deleted := map[string]bool{}
	for name := range missing {
		since, queued := w.orphanedSince[name]
		switch {
		case !queued:
			w.orphanedSince[name] = w.now
		case !w.now.Before(since.Add(podGCQuarantine)):
			deleted[name] = true
			delete(w.orphanedSince, name)
		}
	}
	for _, p := range w.api.pods() {
		if deleted[p.Spec.NodeName] {
			w.tracef("kcm", "pod GC force-deletes %s: node %s no longer exists", p.Name, p.Spec.NodeName)
			deletePod(w.api, p, new(int64))
		}
	}
}
