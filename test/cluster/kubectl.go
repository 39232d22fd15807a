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
	"context"
	"errors"
	"os/exec"
)

// Kubectl returns a kubectl command against the cluster, for demos and for
// people poking at a cluster kept alive in a debugger.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (*exec.Cmd, error) {
	if c.kubectl == "" {
		return nil, errors.New("kubectl not found next to kube-apiserver (build it with `make control-plane`)")
	}
	return exec.CommandContext(ctx, c.kubectl, append([]string{"--kubeconfig=" + c.KubeconfigPath}, args...)...), nil
}
