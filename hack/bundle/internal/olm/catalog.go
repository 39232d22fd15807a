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
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/registry"
	"k8s.io/apimachinery/pkg/util/sets"
)

// OPMImage is the catalog image's base; pinned to the operator-registry
// release the catalog is validated with.
const OPMImage = "quay.io/operator-framework/opm:v1.61.0"

// CatalogOptions are what make passes to the catalog generator.
type CatalogOptions struct {
	// Root is the repository root; the bundle is read from Root/bundle.
	Root string
	// BundleImage is where the bundle image is pushed. Empty means the
	// manager image's repository with a "-bundle" suffix, tagged
	// v<version>.
	BundleImage string
}

// RenderCatalog renders the file-based catalog for the bundle in
// Root/bundle and the releases before it: catalog/<package>/catalog.yaml
// and catalog.Dockerfile.
func RenderCatalog(opts CatalogOptions) (Files, error) {
	cfg, err := CatalogConfig(opts.Root, filepath.Join(opts.Root, BundleDir), opts.BundleImage)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := declcfg.WriteYAML(*cfg, &buf); err != nil {
		return nil, err
	}
	return Files{
		fmt.Sprintf("%s/%s/catalog.yaml", CatalogDir, PackageName): buf.Bytes(),
		CatalogDockerfile:                   catalogDockerfile(),
		CatalogDockerfile + ".dockerignore": dockerignore(CatalogDir),
	}, nil
}

// ReleasesDir holds the bundle of every published release, frozen when it
// was published (docs/releasing.md): the catalog lists them before the
// current bundle, so that OLM can upgrade from each.
const ReleasesDir = "hack/bundle/releases"

// CatalogConfig makes the package, its stable channel and its bundles:
// the frozen releases older than the bundle in bundleDir, then that bundle
// (at bundleImage, or the default image), each as "opm render <dir>" makes
// it (alpha/action is not imported: it pulls in containers/image and its
// cgo gpgme dependency).
func CatalogConfig(root, bundleDir, bundleImage string) (*declcfg.DeclarativeConfig, error) {
	current, err := readCatalogBundle(bundleDir, bundleImage)
	if err != nil {
		return nil, err
	}
	older, err := releasesBefore(root, current.version)
	if err != nil {
		return nil, err
	}
	b := current.bundle
	pkg := declcfg.Package{
		Schema:         declcfg.SchemaPackage,
		Name:           b.Package,
		DefaultChannel: Channel,
	}
	description, err := b.Description()
	if err != nil {
		return nil, err
	}
	pkg.Description = description
	icons, err := b.Icons()
	if err != nil {
		return nil, err
	}
	if len(icons) > 0 {
		// Base64data is already decoded: JSON carries []byte as base64.
		pkg.Icon = &declcfg.Icon{Data: icons[0].Base64data, MediaType: icons[0].MediaType}
	}

	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{pkg}}
	channel := declcfg.Channel{Schema: declcfg.SchemaChannel, Name: Channel, Package: b.Package}
	for _, cb := range append(older, current) {
		channel.Entries = append(channel.Entries, cb.entry)
		cfg.Bundles = append(cfg.Bundles, *cb.rendered)
	}
	cfg.Channels = []declcfg.Channel{channel}
	return cfg, nil
}

// catalogBundle is one bundle as the catalog lists it.
type catalogBundle struct {
	bundle   *registry.Bundle
	version  semver.Version
	entry    declcfg.ChannelEntry
	rendered *declcfg.Bundle
}

// readCatalogBundle reads the bundle in dir, to be pulled from
// bundleImage (empty: <manager repository>-bundle:v<version>).
func readCatalogBundle(dir, bundleImage string) (*catalogBundle, error) {
	input, err := registry.NewImageInput(image.SimpleReference(""), dir)
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", dir, err)
	}
	b := input.Bundle
	csv, err := b.ClusterServiceVersion()
	if err != nil {
		return nil, err
	}
	v, err := b.Version()
	if err != nil {
		return nil, err
	}
	cb := &catalogBundle{bundle: b, entry: declcfg.ChannelEntry{Name: b.Name}}
	if cb.version, err = semver.Parse(v); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	if bundleImage == "" {
		if bundleImage, err = defaultBundleImage(csv.GetAnnotations()["containerImage"], v); err != nil {
			return nil, err
		}
	}
	b.BundleImage = bundleImage
	if cb.entry.SkipRange, err = b.SkipRange(); err != nil {
		return nil, err
	}
	if cb.entry.Replaces, err = b.Replaces(); err != nil {
		return nil, err
	}
	if cb.rendered, err = renderBundle(b); err != nil {
		return nil, err
	}
	return cb, nil
}

// releasesBefore reads the frozen releases older than v, oldest first.
func releasesBefore(root string, v semver.Version) ([]*catalogBundle, error) {
	dirs, err := filepath.Glob(filepath.Join(root, ReleasesDir, "v*"))
	if err != nil {
		return nil, err
	}
	var out []*catalogBundle
	for _, dir := range dirs {
		cb, err := readCatalogBundle(dir, "")
		if err != nil {
			return nil, err
		}
		if cb.version.LT(v) {
			out = append(out, cb)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version.LT(out[j].version) })
	return out, nil
}

// renderBundle mirrors operator-registry's alpha/action bundleToDeclcfg,
// getRelatedImages and moveBundleObjectsToEndOfPropertySlices.
func renderBundle(b *registry.Bundle) (*declcfg.Bundle, error) {
	objs, props, err := registry.ObjectsAndPropertiesFromBundle(b)
	if err != nil {
		return nil, fmt.Errorf("properties of bundle %s: %w", b.Name, err)
	}
	var others, objects []property.Property
	for _, p := range props {
		switch p.Type {
		case property.TypeBundleObject, property.TypeCSVMetadata:
			objects = append(objects, p)
		default:
			others = append(others, p)
		}
	}

	csv, err := b.ClusterServiceVersion()
	if err != nil {
		return nil, err
	}
	var spec struct {
		RelatedImages []declcfg.RelatedImage `json:"relatedImages"`
	}
	if err := json.Unmarshal(csv.Spec, &spec); err != nil {
		return nil, err
	}
	related := spec.RelatedImages
	seen := sets.New[string]()
	for _, ri := range related {
		seen.Insert(ri.Image)
	}
	operatorImages, err := csv.GetOperatorImages()
	if err != nil {
		return nil, err
	}
	for _, img := range append([]string{b.BundleImage}, sets.List(sets.KeySet(operatorImages))...) {
		if img != "" && !seen.Has(img) {
			related = append(related, declcfg.RelatedImage{Image: img})
			seen.Insert(img)
		}
	}
	sort.Slice(related, func(i, j int) bool { return related[i].Image < related[j].Image })

	var csvJSON []byte
	for _, obj := range b.Objects {
		if obj.GetKind() == "ClusterServiceVersion" {
			if csvJSON, err = json.Marshal(obj); err != nil {
				return nil, err
			}
		}
	}
	return &declcfg.Bundle{
		Schema:        declcfg.SchemaBundle,
		Name:          b.Name,
		Package:       b.Package,
		Image:         b.BundleImage,
		Properties:    append(others, objects...),
		RelatedImages: related,
		Objects:       objs,
		CsvJSON:       string(csvJSON),
	}, nil
}

// defaultBundleImage derives <manager repository>-bundle:v<version> from the
// CSV's containerImage annotation.
func defaultBundleImage(img, version string) (string, error) {
	if img == "" {
		return "", fmt.Errorf("the CSV has no containerImage annotation; pass a bundle image")
	}
	repo := img
	if at := strings.LastIndex(repo, "@"); at >= 0 {
		repo = repo[:at]
	}
	if colon := strings.LastIndex(repo, ":"); colon > strings.LastIndex(repo, "/") {
		repo = repo[:colon]
	}
	return fmt.Sprintf("%s-bundle:v%s", repo, version), nil
}

func catalogDockerfile() []byte {
	return []byte(`# Generated by hack/bundle (make catalog). Do not edit.
# Build from the repository root: docker build -f catalog.Dockerfile .
# The base image holds /bin/opm and /bin/grpc_health_probe.
FROM ` + OPMImage + `

ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]

# The declarative config root, and a pre-built serve cache.
ADD catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

LABEL operators.operatorframework.io.index.configs.v1=/configs
`)
}
