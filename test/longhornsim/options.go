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

package longhornsim

import (
	"fmt"
	"strings"
	"time"
)

// NodeDownPodDeletionPolicy mirrors Longhorn's
// node-down-pod-deletion-policy setting, for the values the simulator knows.
type NodeDownPodDeletionPolicy string

const (
	// PolicyDoNothing is Longhorn's default: pods on down nodes are left to
	// Kubernetes.
	PolicyDoNothing NodeDownPodDeletionPolicy = "do-nothing"
	// PolicyDeleteDeploymentPod makes Longhorn release the volumes of an
	// evicted Deployment pod on a down node and then force-delete the pod.
	PolicyDeleteDeploymentPod NodeDownPodDeletionPolicy = "delete-deployment-pod"
)

// Options configure the simulator.
type Options struct {
	// AttachDelay is how long Longhorn takes from accepting an attachment
	// ticket to a running engine (instance-manager start plus the CSI
	// plugin's poll). Zero means 1.5 s.
	AttachDelay time.Duration
	// NodeDownPodDeletionPolicy emulates Longhorn's setting of that name.
	// Empty means PolicyDoNothing, Longhorn's default.
	NodeDownPodDeletionPolicy NodeDownPodDeletionPolicy
	// NodeDownPodDeletionPolicyNamespaces limits the policy to pods in these
	// namespaces. Empty means every namespace, as in Longhorn, where the
	// setting is cluster-wide; the scope exists so that one cluster can run
	// workloads with and without the policy side by side (the benchmark).
	NodeDownPodDeletionPolicyNamespaces []string
	// CRDDir holds the Longhorn CRD fixtures. Empty means
	// <repo>/test/crds/longhorn.
	CRDDir string
}

func (o Options) withDefaults() Options {
	if o.AttachDelay == 0 {
		o.AttachDelay = 1500 * time.Millisecond
	}
	if o.NodeDownPodDeletionPolicy == "" {
		o.NodeDownPodDeletionPolicy = PolicyDoNothing
	}
	return o
}

func (o Options) validate() error {
	switch o.NodeDownPodDeletionPolicy {
	case PolicyDoNothing, PolicyDeleteDeploymentPod:
		return nil
	default:
		return fmt.Errorf("unsupported node-down-pod-deletion-policy %q", o.NodeDownPodDeletionPolicy)
	}
}

// Describe says how the simulated Longhorn behaves, for printed results.
func (o Options) Describe() string {
	o = o.withDefaults()
	policy := string(o.NodeDownPodDeletionPolicy)
	if len(o.NodeDownPodDeletionPolicyNamespaces) > 0 && o.NodeDownPodDeletionPolicy != PolicyDoNothing {
		policy += "(namespaces " + strings.Join(o.NodeDownPodDeletionPolicyNamespaces, ",") + ")"
	}
	return fmt.Sprintf("longhorn=simulated attach-delay=%s node-down-pod-deletion-policy=%s", o.AttachDelay, policy)
}
