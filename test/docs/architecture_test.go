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

package docs

import (
	"bufio"
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	root         = "../.."
	architecture = "docs/architecture.md"
)

// productRoots are the repository's top-level directories. A path the
// page names that starts with one of them must exist; any other path (an
// upstream file, written as <repository>/<path>) is not ours to check.
var productRoots = []string{"api", "bench", "bundle", "catalog", "charts", "cmd", "config", "contrib",
	"controllers", "dist", "docs", "hack", "internal", "test", "version"}

// listedFileByFile are the directories whose every non-test Go file the
// page names, in its tree or its tables.
var listedFileByFile = []string{"cmd/manager", "controllers", "controllers/remediation", "internal/failover"}

// code is a span in backticks; placeholders (<name>) and globs are allowed.
var code = regexp.MustCompile("`([^`\\s]+)`")

func TestArchitectureNamesExistingFiles(t *testing.T) {
	page := read(t, architecture)
	tree := whereThingsAre(t, page)
	for _, p := range tree {
		if !exists(p) {
			t.Errorf("the tree of %s names %s, which does not exist", architecture, p)
		}
	}
	for _, m := range code.FindAllStringSubmatch(page, -1) {
		name := strings.TrimSuffix(m[1], "/")
		switch {
		case strings.ContainsAny(name, "<>") || strings.Contains(name, "://"):
			continue // a placeholder or a URL
		case strings.Contains(name, "/"):
			first, _, _ := strings.Cut(name, "/")
			if slices.Contains(productRoots, first) && !exists(name) {
				t.Errorf("%s names `%s`, which does not exist", architecture, m[1])
			}
		case strings.HasSuffix(name, ".go"):
			if !existsAnywhere(t, name) {
				t.Errorf("%s names `%s`, and no file of the repository has that name", architecture, name)
			}
		}
	}
}

func TestArchitectureNamesEveryProductPackage(t *testing.T) {
	page := read(t, architecture)
	named := map[string]bool{}
	for _, p := range whereThingsAre(t, page) {
		named[p] = true
	}
	for _, m := range code.FindAllStringSubmatch(page, -1) {
		named[strings.TrimSuffix(m[1], "/")] = true
	}
	packages := productPackages(t)
	if len(packages) < 10 {
		t.Fatalf("found only %d product packages: %v", len(packages), packages)
	}
	for _, pkg := range packages {
		if !named[pkg] {
			t.Errorf("%s does not name the package %s", architecture, pkg)
		}
	}
	for _, dir := range listedFileByFile {
		for _, file := range goFiles(t, dir) {
			if file == "doc.go" {
				continue // the package's doc comment
			}
			if !regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(file)).MatchString(page) {
				t.Errorf("%s lists %s file by file but not %s", architecture, dir, file)
			}
		}
	}
}

// whereThingsAre is every path of the tree under "## Where things are":
// one entry per line, two spaces of indent per level, directories ending
// in a slash.
func whereThingsAre(t *testing.T, page string) []string {
	t.Helper()
	_, after, ok := strings.Cut(page, "## Where things are\n\n```\n")
	block, _, closed := strings.Cut(after, "```\n")
	if !ok || !closed {
		t.Fatalf("%s has no tree under \"## Where things are\"", architecture)
	}
	var paths, dirs []string // dirs[i]: the directory open at depth i
	sc := bufio.NewScanner(strings.NewReader(block))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		entry := strings.TrimLeft(text, " ")
		indent := len(text) - len(entry)
		name, _, _ := strings.Cut(entry, " ")
		depth := indent / 2
		if name == "" || indent%2 != 0 || depth > len(dirs) {
			t.Fatalf("%s, tree line %d: %q is not an entry at a depth of two spaces per level", architecture, line, text)
		}
		dirs = dirs[:depth]
		full := path.Join(append(slices.Clone(dirs), name)...)
		paths = append(paths, full)
		if strings.HasSuffix(name, "/") {
			dirs = append(dirs, strings.TrimSuffix(name, "/"))
		}
	}
	return paths
}

// productPackages are the non-test Go packages of the root module outside
// test/ and hack/, as paths relative to the repository root.
func productPackages(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if first, _, _ := strings.Cut(rel, "/"); rel != "." && !slices.Contains(productRoots, first) ||
			first == "test" || first == "hack" {
			return filepath.SkipDir
		}
		if _, err := build.ImportDir(p, 0); err == nil && rel != "." {
			pkgs = append(pkgs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// goFiles are the non-test Go files of dir.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	pkg, err := build.ImportDir(filepath.Join(root, dir), 0)
	if err != nil {
		t.Fatal(err)
	}
	return pkg.GoFiles
}

func exists(p string) bool {
	matches, err := filepath.Glob(filepath.Join(root, p))
	return err == nil && len(matches) > 0
}

var basenames map[string]bool

// existsAnywhere reports whether a file of the repository has the name
// (a glob such as decide*.go allowed).
func existsAnywhere(t *testing.T, name string) bool {
	t.Helper()
	if basenames == nil {
		basenames = map[string]bool{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "tmp") {
				return filepath.SkipDir
			}
			basenames[d.Name()] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for base := range basenames {
		if ok, _ := path.Match(name, base); ok {
			return true
		}
	}
	return false
}

func read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
