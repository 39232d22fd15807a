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

package olm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sigs.k8s.io/yaml"
)

// Files maps a slash-separated path, relative to the repository root, to
// the file's content.
type Files map[string][]byte

// Paths returns the file paths, sorted.
func (f Files) Paths() []string {
	paths := make([]string, 0, len(f))
	for p := range f {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// Write writes the files under root. Each directory in clean is removed
// first, so files the generator no longer makes do not linger.
func (f Files) Write(root string, clean ...string) error {
	for _, dir := range clean {
		if err := os.RemoveAll(filepath.Join(root, filepath.FromSlash(dir))); err != nil {
			return fmt.Errorf("removing %s: %w", dir, err)
		}
	}
	for _, p := range f.Paths() {
		path := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f[p], 0o644); err != nil { //nolint:gosec // generated files are world-readable
			return err
		}
	}
	return nil
}

// marshalYAML renders v as YAML with sorted keys and without null values, so
// output never depends on Go struct layout or map order.
func marshalYAML(v any) ([]byte, error) {
	obj, err := toMap(v)
	if err != nil {
		return nil, err
	}
	out, err := yaml.Marshal(pruneNulls(obj))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// toMap converts v to its JSON object form.
func toMap(v any) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// pruneNulls drops null values (creationTimestamp: null and the like) that
// typed Kubernetes structs emit.
func pruneNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if val == nil {
				continue
			}
			out[k] = pruneNulls(val)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = pruneNulls(val)
		}
		return out
	default:
		return v
	}
}
