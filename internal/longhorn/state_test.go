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

package longhorn

import (
	"context"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unorderedReader serves one Volume and lists its replicas in the order
// given, as a cache lists them: in no fixed order.
type unorderedReader struct{ replicas []string }

func (r unorderedReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if _, ok := obj.(*Volume); ok {
		obj.SetName(key.Name)
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: "longhorn.io", Resource: "volumeattachments"}, key.Name)
}

func (r unorderedReader) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	replicas := list.(*ReplicaList)
	for _, name := range r.replicas {
		replicas.Items = append(replicas.Items, Replica{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: ReplicaSpec{VolumeName: "pvc-a", NodeID: "node-" + name}})
	}
	return nil
}

func TestVolumeReplicasInNameOrder(t *testing.T) {
	for _, order := range [][]string{{"r-2", "r-0", "r-1"}, {"r-1", "r-2", "r-0"}} {
		view, err := State{Reader: unorderedReader{replicas: order}, Namespace: "longhorn-system"}.Volume(context.Background(), "pvc-a", "node-x")
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(view.Replicas))
		for _, r := range view.Replicas {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, []string{"r-0", "r-1", "r-2"}) {
			t.Errorf("listed as %v: replicas %v, want them by name (status messages list them in this order)", order, names)
		}
	}
}
