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
package main

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

func TestHeapOwnerOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stack []string // innermost first
		want  string
	}{
		{"a node decoded from a watch event", []string{
			"runtime.mallocgc", "k8s.io/api/core/v1.(*NodeCondition).Unmarshal", "k8s.io/api/core/v1.(*NodeStatus).Unmarshal",
			"k8s.io/api/core/v1.(*Node).Unmarshal", "k8s.io/apimachinery/pkg/runtime/serializer/protobuf.(*Serializer).Decode",
			"k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive",
		}, "Node (core/v1, decoded)"},
		{"a lease decoded from a list", []string{
			"runtime.makeslice", "k8s.io/api/coordination/v1.(*Lease).Unmarshal", "k8s.io/api/coordination/v1.(*LeaseList).Unmarshal",
			"k8s.io/client-go/rest.Result.Into",
		}, "Lease (coordination/v1, decoded)"},
		{"a transform's copy", []string{
			"runtime.growslice", "github.com/s3gw-tech/s3gw-remediation/controllers.trimPod",
			"k8s.io/client-go/tools/cache.(*DeltaFIFO).queueActionInternalLocked",
		}, "cache transforms (what they keep)"},
		{"a transform's interned string", []string{
			"runtime.mallocgc", "unique.Make[go.shape.string]", "github.com/s3gw-tech/s3gw-remediation/controllers.intern",
			"github.com/s3gw-tech/s3gw-remediation/controllers.init.func10",
		}, "cache transforms (what they keep)"},
		{"a node's struct, before its fields are decoded", []string{
			"runtime.mallocgc", "reflect.unsafe_New", "reflect.New", "k8s.io/apimachinery/pkg/runtime.(*Scheme).New",
			"k8s.io/apimachinery/pkg/runtime.UseOrCreateObject", "k8s.io/apimachinery/pkg/runtime/serializer/protobuf.unmarshalToObject",
			"k8s.io/apimachinery/pkg/runtime/serializer/protobuf.(*Serializer).Decode", "k8s.io/apimachinery/pkg/watch.(*StreamWatcher).receive",
		}, "built-in objects' structs (protobuf: Nodes, Leases, …)"},
		{"a Longhorn node", []string{
			"runtime.mallocgc", "reflect.New", "sigs.k8s.io/json/internal/golang/encoding/json.(*decodeState).object",
			"k8s.io/apimachinery/pkg/runtime/serializer/json.(*Serializer).Decode",
		}, "typed custom resources (JSON: Longhorn's, ours)"},
		{"an index entry", []string{
			"runtime.mapassign_faststr", "k8s.io/client-go/tools/cache.(*storeIndex).updateSingleIndex",
			"k8s.io/client-go/tools/cache.(*threadSafeMap).Update",
		}, "informer stores and indexes"},
		{"anything else: its package", []string{
			"runtime.mallocgc", "strings.(*Builder).grow", "k8s.io/client-go/discovery.(*DiscoveryClient).ServerGroups",
		}, "k8s.io/client-go/discovery"},
	} {
		if got := heapOwnerOf(tc.stack); got != tc.want {
			t.Errorf("%s: owner %q, want %q", tc.name, got, tc.want)
		}
	}
}

var retained [][]byte

func TestHeapSnapshotReadsARealProfile(t *testing.T) {
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = 512 * 1024 }()
	for range 64 {
		retained = append(retained, make([]byte, 64<<10))
	}
	runtime.GC()
	var proto, text bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&proto, 0); err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(&text, 1); err != nil {
		t.Fatal(err)
	}
	var h heapSnapshot
	if err := h.parseMemStats(text.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := h.attribute(proto.Bytes()); err != nil {
		t.Fatal(err)
	}
	if h.HeapInuse < 4<<20 || h.Live < 4<<20 {
		t.Errorf("heap in use %d, live %d: want at least the 4 MiB retained", h.HeapInuse, h.Live)
	}
	// The test's own package holds the 4 MiB.
	const self = "github.com/s3gw-tech/s3gw-remediation/hack/bench"
	if len(h.Owners) == 0 || h.Owners[0].Owner != self || h.Owners[0].Bytes < 4<<20 {
		t.Errorf("top owner %+v, want %s with the 4 MiB:\n%s", h.Owners[:min(3, len(h.Owners))], self, h.topOwners(5))
	}
	if !strings.Contains(h.topOwners(1), self) {
		t.Errorf("topOwners:\n%s", h.topOwners(1))
	}
}
