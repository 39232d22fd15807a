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

package remediation

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// versions remembers, for each CR, the resourceVersion this process last
// wrote or read from the API. A cached copy with another version is most
// likely older than the process's own last write: the CR's watch event
// arrives after the Longhorn, pod and attachment events that wake passes
// meanwhile (half a second late at a thousand nodes), and a pass decided on
// that copy would only lose the optimistic lock on its status patch. Such a
// copy is read again from the API. Versions are compared for equality
// only: their order is the API server's business. The zero value is ready.
type versions struct {
	mu   sync.Mutex
	byCR map[types.NamespacedName]string
}

// saw records the version of the CR as written or read from the API.
func (v *versions) saw(rem *s3gwv1alpha1.S3GWRemediation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.byCR == nil {
		v.byCR = map[types.NamespacedName]string{}
	}
	v.byCR[client.ObjectKeyFromObject(rem)] = rem.ResourceVersion
}

// current reports whether a cached copy is the version last seen, or no
// version was seen.
func (v *versions) current(rem *s3gwv1alpha1.S3GWRemediation) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	seen, ok := v.byCR[client.ObjectKeyFromObject(rem)]
	return !ok || seen == rem.ResourceVersion
}

func (v *versions) forget(key types.NamespacedName) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.byCR, key)
}

// getRemediation reads the CR from the cache, or from the API when the
// cached copy is not the version this process last wrote or read.
func (r *Reconciler) getRemediation(ctx context.Context, key types.NamespacedName) (*s3gwv1alpha1.S3GWRemediation, error) {
	rem := &s3gwv1alpha1.S3GWRemediation{}
	err := r.Client.Get(ctx, key, rem)
	if err == nil && !r.versions.current(rem) {
		err = r.APIReader.Get(ctx, key, rem)
	}
	if apierrors.IsNotFound(err) {
		r.versions.forget(key)
	}
	if err != nil {
		return nil, err
	}
	r.versions.saw(rem)
	return rem, nil
}
