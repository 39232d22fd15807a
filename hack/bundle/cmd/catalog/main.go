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

// Command catalog renders the file-based catalog (catalog/ and
// catalog.Dockerfile) for the bundle in bundle/. make catalog runs it after
// make bundle:
//
//	go run ./cmd/catalog --bundle-image quay.io/s3gw-tech/s3gw-remediation-bundle:v0.2.0
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
)

func main() {
	opts := olm.CatalogOptions{}
	flag.StringVar(&opts.Root, "root", "", "repository root (default: found from the working directory)")
	flag.StringVar(&opts.BundleImage, "bundle-image", "",
		"bundle image the catalog points at (default: <manager image repository>-bundle:v<version>)")
	flag.Parse()
	logrus.SetLevel(logrus.WarnLevel) // operator-registry logs every bundle it reads

	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "catalog:", err)
		os.Exit(1)
	}
}

func run(opts olm.CatalogOptions) error {
	if opts.Root == "" {
		root, err := olm.FindRoot(".")
		if err != nil {
			return err
		}
		opts.Root = root
	}
	files, err := olm.RenderCatalog(opts)
	if err != nil {
		return err
	}
	if err := files.Write(opts.Root, olm.CatalogDir); err != nil {
		return err
	}
	fmt.Printf("Wrote %s/%s/catalog.yaml and %s\n", olm.CatalogDir, olm.PackageName, olm.CatalogDockerfile)
	return nil
}
