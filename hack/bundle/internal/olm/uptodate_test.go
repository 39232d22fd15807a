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

package olm_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
)

// committedOptions are the options the committed bundle must have been
// generated with: VERSION, PREVIOUS_VERSION and IMG from make, else the
// committed CSV's own version, replaced release and image, so the test
// checks the content, not the release.
func committedOptions(t *testing.T, root string) olm.BundleOptions {
	t.Helper()
	csv := loadBundle(t).CSV
	opts := olm.BundleOptions{Root: root, Version: csv.Spec.Version.String(), Image: csv.Annotations["containerImage"],
		Replaces: strings.TrimPrefix(csv.Spec.Replaces, olm.PackageName+".v")}
	if v := os.Getenv("VERSION"); v != "" {
		opts.Version = v
	}
	if v, ok := os.LookupEnv("PREVIOUS_VERSION"); ok {
		opts.Replaces = v
	}
	if img := os.Getenv("IMG"); img != "" {
		opts.Image = img
	}
	return opts
}

// TestCommittedBundleAndCatalogAreUpToDate regenerates the bundle and the
// catalog into a temporary directory and compares them byte for byte with
// the committed ones.
func TestCommittedBundleAndCatalogAreUpToDate(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()

	bundleFiles, err := olm.RenderBundle(committedOptions(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if err := bundleFiles.Write(tmp); err != nil {
		t.Fatal(err)
	}
	// The catalog lists the frozen releases older than the bundle too.
	if err := os.CopyFS(filepath.Join(tmp, olm.ReleasesDir), os.DirFS(filepath.Join(root, olm.ReleasesDir))); err != nil {
		t.Fatal(err)
	}
	catalogFiles, err := olm.RenderCatalog(olm.CatalogOptions{Root: tmp, BundleImage: committedBundleImage(t, root)})
	if err != nil {
		t.Fatal(err)
	}
	if err := catalogFiles.Write(tmp); err != nil {
		t.Fatal(err)
	}

	want := map[string]bool{}
	for _, p := range append(bundleFiles.Paths(), catalogFiles.Paths()...) {
		want[p] = true
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Errorf("%s is not committed: run 'make bundle catalog'", p)
			continue
		}
		regenerated, err := os.ReadFile(filepath.Join(tmp, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, regenerated) {
			t.Errorf("%s is out of date: run 'make bundle catalog'", p)
		}
	}
	for _, dir := range []string{olm.BundleDir, olm.CatalogDir} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if !want[filepath.ToSlash(rel)] {
				t.Errorf("%s is no longer generated: run 'make bundle catalog'", rel)
			}
			return nil
		})
	}
}

// committedBundleImage is the catalog's bundle image: BUNDLE_IMG from make,
// else the one the committed catalog points at for the committed bundle.
func committedBundleImage(t *testing.T, root string) string {
	t.Helper()
	if img := os.Getenv("BUNDLE_IMG"); img != "" {
		return img
	}
	name := loadBundle(t).CSV.Name
	for _, b := range loadCatalog(t, root).Bundles {
		if b.Name == name {
			return b.Image
		}
	}
	t.Fatalf("the catalog has no bundle %s", name)
	return ""
}

func TestRenderingIsDeterministic(t *testing.T) {
	root := repoRoot(t)
	opts := olm.BundleOptions{Root: root, Version: "1.2.3", Image: "example.com/s3gw-remediation:v1.2.3"}
	first, err := olm.RenderBundle(opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := olm.RenderBundle(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range first.Paths() {
			if !bytes.Equal(first[p], again[p]) {
				t.Fatalf("%s differs between two renders", p)
			}
		}
	}
}

func TestRenderBundleRejectsBadOptions(t *testing.T) {
	root := repoRoot(t)
	for _, opts := range []olm.BundleOptions{
		{Root: root, Version: "v0.1.0", Image: "example.com/x:v0.1.0"}, // leading v
		{Root: root, Version: "0.1", Image: "example.com/x:v0.1"},      // not semver
		{Root: root, Version: "0.1.0"},                                 // no image
	} {
		if _, err := olm.RenderBundle(opts); err == nil {
			t.Errorf("RenderBundle(%+v) succeeded, want an error", opts)
		}
	}
}
