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
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Names shared by the bundle, the catalog and their tests.
const (
	// PackageName is the OLM package, and the CSV name's prefix.
	PackageName = "s3gw-remediation"
	// Channel is the only channel, and the default one.
	Channel = "stable"

	// BundleDir, CatalogDir and the Dockerfiles are relative to the
	// repository root.
	BundleDir         = "bundle"
	BundleDockerfile  = "bundle.Dockerfile"
	CatalogDir        = "catalog"
	CatalogDockerfile = "catalog.Dockerfile"

	manifestsInput   = "config/manifests"
	descriptionInput = "config/manifests/description.md"
	iconInput        = "config/manifests/icon.svg"
)

// BundleOptions are what make passes to the generator.
type BundleOptions struct {
	// Root is the repository root.
	Root string
	// Version is the operator version, semver without a leading v.
	Version string
	// Image is the manager image the CSV deploys.
	Image string
	// CreatedAt overrides the CSV's createdAt annotation; empty keeps the
	// value in the CSV base, so regenerating is reproducible.
	CreatedAt string
	// Replaces is the previous release's version, which the CSV replaces;
	// empty for the first release.
	Replaces string
}

// bundleAnnotations are written both to bundle/metadata/annotations.yaml and
// as bundle.Dockerfile LABELs, in this order.
var bundleAnnotations = [][2]string{
	{"operators.operatorframework.io.bundle.mediatype.v1", "registry+v1"},
	{"operators.operatorframework.io.bundle.manifests.v1", "manifests/"},
	{"operators.operatorframework.io.bundle.metadata.v1", "metadata/"},
	{"operators.operatorframework.io.bundle.package.v1", PackageName},
	{"operators.operatorframework.io.bundle.channels.v1", Channel},
	{"operators.operatorframework.io.bundle.channel.default.v1", Channel},
	{"operators.operatorframework.io.metrics.builder", builder},
	{"operators.operatorframework.io.metrics.mediatype.v1", "metrics+v1"},
	{"operators.operatorframework.io.test.mediatype.v1", "scorecard+v1"},
	{"operators.operatorframework.io.test.config.v1", "tests/scorecard/"},
}

// builder names this generator where operator-sdk would name itself.
const builder = "s3gw-remediation-hack-bundle"

// BundleAnnotations returns the bundle's metadata annotations.
func BundleAnnotations() map[string]string {
	out := make(map[string]string, len(bundleAnnotations))
	for _, kv := range bundleAnnotations {
		out[kv[0]] = kv[1]
	}
	return out
}

// RenderBundle renders bundle/ and bundle.Dockerfile.
func RenderBundle(opts BundleOptions) (Files, error) {
	if _, err := semver.Parse(opts.Version); err != nil {
		return nil, fmt.Errorf("version %q is not semver (no leading v): %w", opts.Version, err)
	}
	if opts.Image == "" {
		return nil, fmt.Errorf("no image")
	}
	if opts.Replaces != "" {
		prev, err := semver.Parse(opts.Replaces)
		if err != nil || !prev.LT(semver.MustParse(opts.Version)) {
			return nil, fmt.Errorf("replaces %q must be a semver version before %s", opts.Replaces, opts.Version)
		}
	}
	in, err := render(filepath.Join(opts.Root, manifestsInput))
	if err != nil {
		return nil, err
	}
	description, err := os.ReadFile(filepath.Join(opts.Root, descriptionInput))
	if err != nil {
		return nil, err
	}
	icon, err := os.ReadFile(filepath.Join(opts.Root, iconInput))
	if err != nil {
		return nil, err
	}

	csv, err := buildCSV(in, opts, string(description), icon)
	if err != nil {
		return nil, err
	}

	files := Files{}
	add := func(name string, obj any) error {
		out, err := marshalYAML(obj)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		files[BundleDir+"/"+name] = out
		return nil
	}

	csvMap, err := toMap(csv)
	if err != nil {
		return nil, err
	}
	dropTypedNoise(csvMap)
	if err := add("manifests/"+PackageName+".clusterserviceversion.yaml", csvMap); err != nil {
		return nil, err
	}
	for _, crd := range in.crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		if err := add(fmt.Sprintf("manifests/%s_%s.yaml", group, plural), crd.Object); err != nil {
			return nil, err
		}
	}
	for _, obj := range manifestObjects(in) {
		obj = obj.DeepCopy()
		obj.SetNamespace("") // OLM installs them into the operator's namespace
		obj.SetLabels(withoutKustomizeLabel(obj.GetLabels()))
		gv := strings.ReplaceAll(obj.GroupVersionKind().GroupVersion().String(), "/", "_")
		name := fmt.Sprintf("manifests/%s_%s_%s.yaml", obj.GetName(), gv, strings.ToLower(obj.GetKind()))
		if err := add(name, obj.Object); err != nil {
			return nil, err
		}
	}
	if err := add("tests/scorecard/config.yaml", in.scorecard.Object); err != nil {
		return nil, err
	}
	files[BundleDir+"/metadata/annotations.yaml"] = annotationsFile()
	files[BundleDockerfile] = bundleDockerfile()
	files[BundleDockerfile+".dockerignore"] = dockerignore(BundleDir)
	return files, nil
}

func annotationsFile() []byte {
	var b strings.Builder
	b.WriteString("# Generated by hack/bundle (make bundle). Do not edit.\n")
	b.WriteString("annotations:\n")
	for _, kv := range bundleAnnotations {
		fmt.Fprintf(&b, "  %s: %s\n", kv[0], kv[1])
	}
	return []byte(b.String())
}

func bundleDockerfile() []byte {
	var b strings.Builder
	b.WriteString("# Generated by hack/bundle (make bundle). Do not edit.\n")
	b.WriteString("# Build from the repository root: docker build -f bundle.Dockerfile .\n")
	b.WriteString("FROM scratch\n\n")
	for _, kv := range bundleAnnotations {
		fmt.Fprintf(&b, "LABEL %s=%s\n", kv[0], kv[1])
	}
	b.WriteString("\nCOPY bundle/manifests /manifests/\n")
	b.WriteString("COPY bundle/metadata /metadata/\n")
	b.WriteString("COPY bundle/tests/scorecard /tests/scorecard/\n")
	return []byte(b.String())
}

// managedByLabel is set to "kustomize" throughout config/; in a bundle OLM
// manages the objects, so the label would be wrong there.
const managedByLabel = "app.kubernetes.io/managed-by"

func withoutKustomizeLabel(labels map[string]string) map[string]string {
	if labels[managedByLabel] != "kustomize" {
		return labels
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != managedByLabel {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// dropTypedNoise removes the empty fields the typed CSV emits but nobody
// wrote: status, creationTimestamp, an empty apiservicedefinitions, a
// disabled cleanup, and empty deployment strategies.
func dropTypedNoise(csv map[string]any) {
	delete(csv, "status")
	unstructured.RemoveNestedField(csv, "metadata", "creationTimestamp")
	if m, _, _ := unstructured.NestedMap(csv, "spec", "apiservicedefinitions"); len(m) == 0 {
		unstructured.RemoveNestedField(csv, "spec", "apiservicedefinitions")
	}
	if enabled, _, _ := unstructured.NestedBool(csv, "spec", "cleanup", "enabled"); !enabled {
		unstructured.RemoveNestedField(csv, "spec", "cleanup")
	}
	deployments, _, _ := unstructured.NestedSlice(csv, "spec", "install", "spec", "deployments")
	for _, d := range deployments {
		if dm, ok := d.(map[string]any); ok {
			if m, _, _ := unstructured.NestedMap(dm, "spec", "strategy"); len(m) == 0 {
				unstructured.RemoveNestedField(dm, "spec", "strategy")
			}
		}
	}
	_ = unstructured.SetNestedSlice(csv, deployments, "spec", "install", "spec", "deployments")
}

// dockerignore is read by BuildKit instead of the repository's .dockerignore,
// which keeps bundle/ and catalog/ out of the manager image's context.
func dockerignore(dir string) []byte {
	return []byte("# Generated by hack/bundle. Do not edit.\n# BuildKit reads this instead of .dockerignore for the Dockerfile of the same name.\n*\n!" + dir + "\n")
}
