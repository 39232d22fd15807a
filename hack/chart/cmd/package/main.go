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

// Command package writes the release's chart archives (make
// chart-package), as `helm package` does, for `helm push` to an OCI
// registry.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/s3gw-tech/s3gw-remediation/hack/chart/internal/helmchart"
)

func main() {
	root := flag.String("root", "../..", "Repository root.")
	out := flag.String("out", "", "Directory to write the .tgz archives to.")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "package: --out is required")
		os.Exit(2)
	}
	paths, err := helmchart.Package(*root, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "package:", err)
		os.Exit(1)
	}
	for _, p := range paths {
		fmt.Println(p)
	}
}
