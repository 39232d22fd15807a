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

// Command bundle renders the OLM bundle (bundle/ and bundle.Dockerfile) from
// config/manifests. make bundle runs it:
//
//	go run ./cmd/bundle --version 0.2.0 --image quay.io/s3gw-tech/s3gw-remediation:v0.2.0
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
)

func main() {
	opts := olm.BundleOptions{}
	flag.StringVar(&opts.Root, "root", "", "repository root (default: found from the working directory)")
	flag.StringVar(&opts.Version, "version", "", "operator version, semver without a leading v (required)")
	flag.StringVar(&opts.Image, "image", "", "manager image the CSV deploys (required)")
	flag.StringVar(&opts.CreatedAt, "created-at", "", "CSV createdAt annotation (default: the CSV base's, so output is reproducible)")
	flag.StringVar(&opts.Replaces, "replaces", "", "version of the previous release, which the CSV replaces (empty for the first)")
	flag.Parse()
	logrus.SetLevel(logrus.WarnLevel) // operator-registry logs every bundle it reads

	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run(opts olm.BundleOptions) error {
	if opts.Version == "" || opts.Image == "" {
		return fmt.Errorf("--version and --image are required")
	}
	if opts.Root == "" {
		root, err := olm.FindRoot(".")
		if err != nil {
			return err
		}
		opts.Root = root
	}
	files, err := olm.RenderBundle(opts)
	if err != nil {
		return err
	}
	if err := files.Write(opts.Root, olm.BundleDir); err != nil {
		return err
	}
	fmt.Printf("Wrote %d files to %s/ and %s for %s.v%s\n", len(files)-2, olm.BundleDir, olm.BundleDockerfile, olm.PackageName, opts.Version)
	return nil
}
