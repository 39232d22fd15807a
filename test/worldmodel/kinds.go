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

import (
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// The kinds of the modelled cluster.
var (
	gvkNode           = corev1.SchemeGroupVersion.WithKind("Node")
	gvkPod            = corev1.SchemeGroupVersion.WithKind("Pod")
	gvkPVC            = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
	gvkPV             = corev1.SchemeGroupVersion.WithKind("PersistentVolume")
	gvkLease          = coordinationv1.SchemeGroupVersion.WithKind("Lease")
	gvkReplicaSet     = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	gvkDeployment     = appsv1.SchemeGroupVersion.WithKind("Deployment")
	gvkKubeAttachment = storagev1.SchemeGroupVersion.WithKind("VolumeAttachment")

	gvkLonghornNode            = longhorn.GroupVersion.WithKind("Node")
	gvkLonghornVolume          = longhorn.GroupVersion.WithKind("Volume")
	gvkLonghornReplica         = longhorn.GroupVersion.WithKind("Replica")
	gvkLonghornEngine          = longhorn.GroupVersion.WithKind("Engine")
	gvkLonghornAttachment      = longhorn.GroupVersion.WithKind("VolumeAttachment")
	gvkLonghornInstanceManager = longhorn.GroupVersion.WithKind("InstanceManager")

	gvkRemediation         = s3gwv1alpha1.GroupVersion.WithKind("S3GWRemediation")
	gvkRemediationTemplate = s3gwv1alpha1.GroupVersion.WithKind("S3GWRemediationTemplate")

	farGroupVersion = schema.GroupVersion{Group: "fence-agents-remediation.medik8s.io", Version: medik8sVersion}
	gvkFAR          = farGroupVersion.WithKind("FenceAgentsRemediation")
	gvkFARTemplate  = farGroupVersion.WithKind("FenceAgentsRemediationTemplate")
	gvkNHC          = schema.GroupVersionKind{Group: "remediation.medik8s.io", Version: medik8sVersion, Kind: "NodeHealthCheck"}
)

// medik8sVersion is the API version of every medik8s kind the model serves.
const medik8sVersion = "v1alpha1"

// scheme holds the typed kinds; FAR and NHC kinds are stored unstructured,
// as their modules are not dependencies.
var scheme = newScheme()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, s3gwv1alpha1.AddToScheme, longhorn.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// installKinds installs the kinds every episode serves, plus FAR's and
// SNR's when the scenario has them (else NoMatch).
func installKinds(s *store, far, snr bool) {
	namespaced := kindInfo{namespaced: true, status: true}
	cluster := kindInfo{status: true}
	for _, gvk := range []schema.GroupVersionKind{gvkPod, gvkPVC, gvkReplicaSet, gvkDeployment,
		gvkLonghornNode, gvkLonghornVolume, gvkLonghornReplica, gvkLonghornEngine, gvkLonghornAttachment,
		gvkLonghornInstanceManager, gvkRemediation, gvkRemediationTemplate} {
		s.install(gvk, namespaced)
	}
	for _, gvk := range []schema.GroupVersionKind{gvkNode, gvkPV, gvkKubeAttachment, gvkNHC} {
		s.install(gvk, cluster)
	}
	s.install(gvkLease, kindInfo{namespaced: true})
	if far {
		s.install(gvkFAR, namespaced)
		s.install(gvkFARTemplate, namespaced)
	}
	if snr {
		s.install(gvkSNR, namespaced)
		s.install(gvkSNRTemplate, namespaced)
	}
	s.k = hotKinds{nodes: s.kinds[gvkNode], pods: s.kinds[gvkPod], leases: s.kinds[gvkLease],
		replicaSets: s.kinds[gvkReplicaSet], kubeAttachments: s.kinds[gvkKubeAttachment],
		longhornNodes: s.kinds[gvkLonghornNode], longhornVolumes: s.kinds[gvkLonghornVolume],
		longhornReplicas: s.kinds[gvkLonghornReplica], longhornEngines: s.kinds[gvkLonghornEngine],
		longhornAttachments: s.kinds[gvkLonghornAttachment], longhornInstanceManagers: s.kinds[gvkLonghornInstanceManager],
		remediations: s.kinds[gvkRemediation]}
}
