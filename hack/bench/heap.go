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
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// heapSnapshot is the manager's heap at one moment: pprof's in-use space
// (live at the last garbage collection) by owner, and the runtime's
// MemStats of the same response.
type heapSnapshot struct {
	// Label says when it was taken ("before the failures", "peak").
	Label string `json:"label"`
	// At is seconds since the manager's RSS sampling began; RSS the
	// resident set then.
	At  float64 `json:"at"`
	RSS int64   `json:"rssBytes"`
	// HeapInuse is MemStats.HeapInuse (spans in use, live and not yet
	// swept); HeapAlloc the allocated objects; Sys all the runtime holds;
	// NextGC the heap size the next collection triggers at.
	HeapInuse int64 `json:"heapInuseBytes"`
	HeapAlloc int64 `json:"heapAllocBytes"`
	Sys       int64 `json:"sysBytes"`
	NextGC    int64 `json:"nextGCBytes"`
	// Live is the profile's total in-use space, Owners its split.
	Live   int64       `json:"liveBytes"`
	Owners []heapOwner `json:"owners"`
	// File is the profile (pprof's protobuf) in the result directory.
	File    string `json:"file,omitempty"`
	profile []byte
}

// heapOwner is the in-use space one owner holds.
type heapOwner struct {
	Owner   string `json:"owner"`
	Bytes   int64  `json:"bytes"`
	Objects int64  `json:"objects"`
}

// parseMemStats reads the runtime.MemStats lines ("# HeapInuse = 123")
// that /debug/pprof/heap?debug=1 ends with.
func (h *heapSnapshot) parseMemStats(text []byte) error {
	fields := map[string]*int64{"HeapInuse": &h.HeapInuse, "HeapAlloc": &h.HeapAlloc, "Sys": &h.Sys, "NextGC": &h.NextGC}
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		dst, known := fields[key]
		if !ok || !known {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return fmt.Errorf("parsing MemStats %s: %w", key, err)
		}
		*dst = n
		found++
	}
	if found != len(fields) {
		return fmt.Errorf("heap profile text holds %d of the %d MemStats fields", found, len(fields))
	}
	return sc.Err()
}

// attribute splits the profile's in-use space by owner.
func (h *heapSnapshot) attribute(data []byte) error {
	p, err := profile.ParseData(data)
	if err != nil {
		return fmt.Errorf("parsing the heap profile: %w", err)
	}
	space, objects := -1, -1
	for i, st := range p.SampleType {
		switch st.Type {
		case "inuse_space":
			space = i
		case "inuse_objects":
			objects = i
		}
	}
	if space < 0 || objects < 0 {
		return fmt.Errorf("heap profile without in-use samples")
	}
	byOwner := map[string]*heapOwner{}
	for _, s := range p.Sample {
		owner := heapOwnerOf(stackOf(s))
		o := byOwner[owner]
		if o == nil {
			o = &heapOwner{Owner: owner}
			byOwner[owner] = o
		}
		o.Bytes += s.Value[space]
		o.Objects += s.Value[objects]
		h.Live += s.Value[space]
	}
	h.Owners = h.Owners[:0]
	for _, o := range byOwner {
		h.Owners = append(h.Owners, *o)
	}
	slices.SortFunc(h.Owners, func(a, b heapOwner) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Owner, b.Owner))
	})
	return nil
}

// stackOf is the sample's call stack, innermost function first.
func stackOf(s *profile.Sample) []string {
	var stack []string
	for _, loc := range s.Location {
		for _, line := range loc.Line { // inlined callees first
			if line.Function != nil {
				stack = append(stack, line.Function.Name)
			}
		}
	}
	return stack
}

var (
	// protobufUnmarshal is the generated decoder of a built-in kind,
	// e.g. k8s.io/api/core/v1.(*Node).Unmarshal: controller-runtime reads
	// built-in kinds as protobuf, so the outermost one names the kind an
	// allocation was decoded for.
	protobufUnmarshal = regexp.MustCompile(`^k8s\.io/api/([a-z0-9.]+)/(v[0-9a-z]+)\.\(\*(\w+)\)\.Unmarshal$`)
	// trimFunc is one of the cache's transforms, which allocate what they
	// keep: trimmed maps and slices, interned strings. They are closures
	// made by transform, named controllers.init.funcN in a profile.
	trimFunc = regexp.MustCompile(`^github\.com/s3gw-tech/s3gw-remediation/controllers\.(trim\w+|init\.|transform\[)`)
)

// heapOwnerOf names what holds an allocation, from its stack (innermost
// first): the built-in kind it was decoded for, a cache transform, the JSON
// decoding of custom resources (typed or unstructured), the informers'
// stores and indexes, or else the innermost package that is not the Go
// runtime or a standard library helper.
func heapOwnerOf(stack []string) string {
	for i := len(stack) - 1; i >= 0; i-- { // outermost first
		fn := stack[i]
		if m := protobufUnmarshal.FindStringSubmatch(fn); m != nil && !strings.HasSuffix(m[3], "List") {
			return m[3] + " (" + m[1] + "/" + m[2] + ", decoded)"
		}
		if trimFunc.MatchString(fn) {
			return "cache transforms (what they keep)"
		}
	}
	has := func(prefixes ...string) bool {
		return slices.ContainsFunc(stack, func(fn string) bool {
			return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(fn, p) })
		})
	}
	switch {
	case has("k8s.io/apimachinery/pkg/apis/meta/v1/unstructured."):
		return "unstructured objects (JSON, other remediators' and NHC's kinds)"
	case has("k8s.io/apimachinery/pkg/runtime/serializer/protobuf."):
		// The struct itself, made before its generated Unmarshal runs.
		return "built-in objects' structs (protobuf: Nodes, Leases, …)"
	case has("sigs.k8s.io/json.", "k8s.io/apimachinery/pkg/runtime/serializer/json.", "encoding/json."):
		return "typed custom resources (JSON: Longhorn's, ours)"
	case has("k8s.io/client-go/tools/cache.(*threadSafeMap)", "k8s.io/client-go/tools/cache.(*storeIndex)",
		"k8s.io/client-go/tools/cache.(*cache)"):
		return "informer stores and indexes"
	case has("k8s.io/client-go/tools/cache.(*DeltaFIFO)", "k8s.io/client-go/tools/cache.(*RealFIFO)"):
		return "informer queues"
	}
	for _, fn := range stack {
		if pkg := packageOf(fn); !runtimeHelper(pkg) {
			return pkg
		}
	}
	return "Go runtime"
}

// packageOf is a function name's import path.
func packageOf(fn string) string {
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// runtimeHelper tells the packages that allocate on behalf of their caller.
func runtimeHelper(pkg string) bool {
	switch pkg {
	case "runtime", "reflect", "sync", "strings", "bytes", "bufio", "strconv", "fmt", "maps", "slices", "sort",
		"unique", "internal/sync", "compress/flate", "compress/gzip", "io", "errors", "encoding/base64":
		return true
	}
	return strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "runtime/")
}

// topOwners renders the n largest owners, one a line.
func (h *heapSnapshot) topOwners(n int) string {
	var b strings.Builder
	for _, o := range h.Owners[:min(n, len(h.Owners))] {
		fmt.Fprintf(&b, "    %6.1f MiB %5.1f %%  %s\n", float64(o.Bytes)/(1<<20), 100*float64(o.Bytes)/float64(max(h.Live, 1)), o.Owner)
	}
	return b.String()
}
