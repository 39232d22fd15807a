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

package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// ImageWarmth is what the protection report of template (in
// TemplateNamespace) says of how warm the gateway's candidate nodes are;
// nil while it reports none.
func (e *Env) ImageWarmth(ctx context.Context, template string, g *Gateway) (*s3gwv1alpha1.ImageWarmth, error) {
	t := &s3gwv1alpha1.S3GWRemediationTemplate{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: TemplateNamespace, Name: template}, t); err != nil {
		return nil, err
	}
	for _, p := range t.Status.Pods {
		if p.Namespace == g.Namespace && strings.HasPrefix(p.Name, g.Deployment+"-") {
			return p.Images, nil
		}
	}
	return nil, nil
}

// WaitForWarmCandidates waits until the report of template says that every
// node the gateway's replacement may be scheduled to holds its images,
// and returns that warmth.
func (e *Env) WaitForWarmCandidates(ctx context.Context, template string, g *Gateway, timeout time.Duration) (*s3gwv1alpha1.ImageWarmth, error) {
	var w *s3gwv1alpha1.ImageWarmth
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		w, err = e.ImageWarmth(ctx, template, g)
		return err == nil && w != nil && w.Reason == s3gwv1alpha1.ReasonAllCandidatesWarm, err
	})
	if err != nil {
		return w, fmt.Errorf("waiting for gateway %s/%s's candidate nodes to hold its images (last: %+v): %w",
			g.Namespace, g.Release, w, err)
	}
	return w, nil
}
