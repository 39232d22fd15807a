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

package far

import (
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// NewManager returns a manager acting as FAR's ServiceAccount in namespace,
// its client set up as FAR's main.go sets up its own: every read goes
// through the cache, whose informers list and watch each kind
// cluster-wide. For Secrets that needs the cluster-wide right OLM gives
// FAR (SecretsClusterWide): with FAR's own Role only, the informer is
// forbidden and the first Secret read waits for it forever, which stops
// FAR's one worker — as the real FAR does.
func NewManager(cfg *rest.Config, namespace string, log logr.Logger) (manager.Manager, error) {
	mgr, err := ctrl.NewManager(Impersonate(cfg, namespace), ctrl.Options{
		Scheme:                 scheme.Scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		// FAR's CRs are typed in FAR, hence cached; here they are
		// unstructured.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating FAR's manager: %w", err)
	}
	return mgr, nil
}
