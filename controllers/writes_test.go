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

package controllers

import (
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
)

// write is one API write the reconciler made.
type write struct {
	Verb, Kind, Name, SubResource string
}

func (w write) String() string {
	if w.SubResource != "" {
		return fmt.Sprintf("%s %s/%s %s", w.Verb, w.Kind, w.SubResource, w.Name)
	}
	return fmt.Sprintf("%s %s %s", w.Verb, w.Kind, w.Name)
}

// writeRecorder is a client that records every write and can fail some of
// them before they reach the API server.
type writeRecorder struct {
	client.Client
	mu     sync.Mutex
	writes []write
	// inject, if set, returns an error to fail a write instead of sending it.
	inject func(write) error
}

func newWriteRecorder() *writeRecorder {
	base, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	r := &writeRecorder{}
	r.Client = interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return r.do("create", obj, "", func() error { return c.Create(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return r.do("delete", obj, "", func() error { return c.Delete(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return r.do("update", obj, "", func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return r.do("patch", obj, "", func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return r.do("patch", obj, sub, func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return r.do("update", obj, sub, func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
	})
	return r
}

func (r *writeRecorder) do(verb string, obj client.Object, sub string, send func() error) error {
	w := write{Verb: verb, Kind: kindOf(obj), Name: obj.GetName(), SubResource: sub}
	r.mu.Lock()
	r.writes = append(r.writes, w)
	inject := r.inject
	r.mu.Unlock()
	if inject != nil {
		if err := inject(w); err != nil {
			return err
		}
	}
	return send()
}

// kindOf names an object's kind; Longhorn's kinds carry their group, so
// that its VolumeAttachment is not taken for storage.k8s.io's.
func kindOf(obj runtime.Object) string {
	gvk, err := apiutil.GVKForObject(obj, env.Scheme)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	if gvk.Group == longhorn.GroupVersion.Group {
		return gvk.Kind + "." + gvk.Group
	}
	return gvk.Kind
}

// Writes returns the writes so far, optionally only those of a kind.
func (r *writeRecorder) Writes(kinds ...string) []write {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []write
	for _, w := range r.writes {
		if len(kinds) == 0 || contains(kinds, w.Kind) {
			out = append(out, w)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
