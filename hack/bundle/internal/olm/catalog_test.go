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
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
)

func loadCatalog(t *testing.T, root string) *declcfg.DeclarativeConfig {
	t.Helper()
	cfg, err := declcfg.LoadFS(context.Background(), os.DirFS(filepath.Join(root, olm.CatalogDir)))
	if err != nil {
		t.Fatalf("loading catalog/: %v (run 'make catalog')", err)
	}
	return cfg
}

// TestCatalogLoadsAndValidates loads the catalog as "opm serve" and
// "opm validate" do and checks it offers the committed bundle on stable.
func TestCatalogLoadsAndValidates(t *testing.T) {
	root := repoRoot(t)
	cfg := loadCatalog(t, root)
	m, err := declcfg.ConvertToModel(*cfg)
	if err != nil {
		t.Fatalf("converting the catalog to a model: %v", err)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("catalog model: %v", err)
	}

	pkg, ok := m[olm.PackageName]
	if !ok {
		t.Fatalf("catalog has no package %s", olm.PackageName)
	}
	if pkg.DefaultChannel == nil || pkg.DefaultChannel.Name != olm.Channel {
		t.Errorf("default channel is %v, want %s", pkg.DefaultChannel, olm.Channel)
	}
	if pkg.Icon == nil || pkg.Icon.MediaType != "image/svg+xml" || len(pkg.Icon.Data) == 0 {
		t.Errorf("package icon is %v, want the SVG", pkg.Icon)
	}
	head, err := pkg.Channels[olm.Channel].Head()
	if err != nil {
		t.Fatalf("stable channel head: %v", err)
	}

	csv := loadBundle(t).CSV
	if head.Name != csv.Name {
		t.Errorf("stable channel head is %s, want the bundle's %s", head.Name, csv.Name)
	}
	if head.Version.String() != csv.Spec.Version.String() {
		t.Errorf("head version is %s, want %s", head.Version, csv.Spec.Version)
	}
	gvks := map[string]bool{}
	for _, p := range head.Properties {
		if p.Type != property.TypeGVK {
			continue
		}
		var gvk property.GVK
		if err := json.Unmarshal(p.Value, &gvk); err != nil {
			t.Fatal(err)
		}
		gvks[gvk.Group+"/"+gvk.Version+"/"+gvk.Kind] = true
	}
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		key := "s3gw-remediation.medik8s.io/" + owned.Version + "/" + owned.Kind
		if !gvks[key] {
			t.Errorf("bundle %s does not provide olm.gvk %s", head.Name, key)
		}
	}
	if len(head.Objects) == 0 {
		t.Errorf("bundle %s carries no olm.bundle.object", head.Name)
	}
}

// TestNextVersionCatalogUpgradesFromTheReleases renders this tree as the
// release after the newest frozen one, as docs/releasing.md cuts it, and
// checks the catalog offers an upgrade path: both bundles on stable, the
// new one the head, replacing the release and skipping everything older.
func TestNextVersionCatalogUpgradesFromTheReleases(t *testing.T) {
	root := repoRoot(t)
	files, err := olm.RenderBundle(olm.BundleOptions{Root: root, Version: "0.2.0",
		Image: "quay.io/s3gw-tech/s3gw-remediation:v0.2.0", Replaces: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := files.Write(out, olm.BundleDir); err != nil {
		t.Fatal(err)
	}
	cfg, err := olm.CatalogConfig(root, filepath.Join(out, olm.BundleDir), "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := declcfg.ConvertToModel(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("catalog model: %v", err)
	}
	channel := m[olm.PackageName].Channels[olm.Channel]
	head, err := channel.Head()
	if err != nil {
		t.Fatal(err)
	}
	if head.Name != olm.PackageName+".v0.2.0" || head.Replaces != olm.PackageName+".v0.1.0" || head.SkipRange != "<0.2.0" {
		t.Errorf("head %s replaces %q skipRange %q; want v0.2.0 replacing v0.1.0, skipping <0.2.0", head.Name, head.Replaces, head.SkipRange)
	}
	old, ok := channel.Bundles[olm.PackageName+".v0.1.0"]
	if !ok {
		t.Fatalf("the channel lost the release v0.1.0: %v", channel.Bundles)
	}
	if old.Image != "quay.io/s3gw-tech/s3gw-remediation-bundle:v0.1.0" {
		t.Errorf("v0.1.0's bundle image is %s, want where it was published", old.Image)
	}
}
