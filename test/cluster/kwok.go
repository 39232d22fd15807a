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

package cluster

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The contract between kwok (the pod and node half of the simulated
// kubelet) and longhornsim (its volume half). Both halves act only on
// nodes carrying ManagedNodeLabel=true: removing it is how a node dies.
const (
	// ManagedNodeLabel marks a node whose simulated kubelet runs. kwok renews
	// the Lease and runs pods only for nodes with ManagedNodeLabel=true.
	ManagedNodeLabel = "local-cluster.s3gw-tech.io/kubelet-running"
	// VolumesMountedAnnotation is set to "true" on a pod by longhornsim once
	// all its volumes are attached and mounted, and removed when they are
	// unmounted. kwok starts a pod with PVCs only once it is set, and
	// finishes deleting a pod only once it is gone.
	VolumesMountedAnnotation = "local-cluster.s3gw-tech.io/volumes-mounted"
	// ImagePullTimeAnnotation on a pod is how long its simulated kubelet
	// takes to pull the pod's images on a node ColdNodesAnnotation lists:
	// the pod-ready Stage starts it that much later there. kwok pulls no
	// image and knows no node's images, so whoever creates the pod says
	// where they are missing (the failover benchmark's cold-image mode).
	ImagePullTimeAnnotation = "local-cluster.s3gw-tech.io/image-pull-time"
	// ColdNodesAnnotation lists, comma-separated, the nodes that do not
	// hold the pod's images.
	ColdNodesAnnotation = "local-cluster.s3gw-tech.io/cold-nodes"
)

// stages are the project's kwok Stage files; see each file for its role.
//
//go:embed stages/*.yaml
var stages embed.FS

// writeStages copies the embedded Stage files into dir and returns their
// paths for kwok's --config flag.
func writeStages(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating stage directory: %w", err)
	}
	entries, err := fs.ReadDir(stages, "stages")
	if err != nil {
		return nil, fmt.Errorf("reading embedded stages: %w", err)
	}
	paths := make([]string, 0, len(entries))
	for _, e := range entries {
		data, err := stages.ReadFile("stages/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading embedded stage %s: %w", e.Name(), err)
		}
		path := filepath.Join(dir, e.Name())
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, fmt.Errorf("writing stage %s: %w", e.Name(), err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// kwokArgs runs kwok against the cluster for labelled nodes only, with a
// kubelet-like Lease heartbeat.
func kwokArgs(kubeconfig string, stagePaths []string, port int, o Options) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + strings.Join(stagePaths, ","),
		"--manage-nodes-with-label-selector=" + ManagedNodeLabel + "=true",
		fmt.Sprintf("--node-lease-duration-seconds=%d", int(o.NodeLeaseDuration.Seconds())),
		fmt.Sprintf("--server-address=127.0.0.1:%d", port),
	}
}
