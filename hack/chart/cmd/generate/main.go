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

// Command generate writes dist/ (make build-installer), the chart's
// generated files (make chart) or the copies of the shipped NodeHealthCheck
// and StorageClass (make copies).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/generate"
)

func main() {
	root := flag.String("root", "../..", "Repository root.")
	what := flag.String("what", "", "installer (dist/), chart (charts/) or copies (of config/nodehealthcheck and contrib/s3gw-placement's StorageClass).")
	image := flag.String("image", "", "The manager's image, for installer.")
	version := flag.String("version", "", "The operator's version without v, for chart.")
	flag.Parse()
	if err := run(*root, *what, *image, *version); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(root, what, image, version string) error {
	var (
		files generate.Files
		owned []string // directories whose other files go
		err   error
	)
	switch {
	case what == "installer" && image != "":
		files, err = generate.Installer(root, image)
		owned = []string{"dist"}
	case what == "copies":
		files, err = generate.Copies(root)
	case what == "chart" && version != "":
		files, err = generate.Chart(root, version)
		owned = []string{filepath.Join(generate.CRDChartDir, "templates"), filepath.Join(generate.ChartDir, "files")}
	default:
		return fmt.Errorf("--what installer needs --image, --what chart needs --version (got --what %q)", what)
	}
	if err != nil {
		return err
	}
	return generate.Write(root, files, owned...)
}
