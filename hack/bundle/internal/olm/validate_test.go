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
	"path/filepath"
	"regexp"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	registrybundle "github.com/operator-framework/operator-registry/pkg/lib/bundle"
	"github.com/sirupsen/logrus"

	"github.com/s3gw-tech/s3gw-remediation/hack/bundle/internal/olm"
)

// bundleValidators are what "operator-sdk bundle validate ./bundle
// --select-optional suite=operatorframework" runs: the default bundle
// validators plus the object validator, then the optional suite.
var bundleValidators = map[string]interfaces.Validator{
	"csv":                   validation.ClusterServiceVersionValidator,
	"crd":                   validation.CustomResourceDefinitionValidator,
	"bundle":                validation.BundleValidator,
	"objects":               validation.ObjectValidator,
	"operatorhub-v2":        validation.OperatorHubV2Validator,
	"standard-capabilities": validation.StandardCapabilitiesValidator,
	"standard-categories":   validation.StandardCategoriesValidator,
	"good-practices":        validation.GoodPracticesValidator,
	"alpha-deprecated-apis": validation.AlphaDeprecatedAPIsValidator,
}

// validate runs bundleValidators on a loaded bundle and returns what they
// report.
func validate(b *manifests.Bundle) (errs, warns []string) {
	// As operator-sdk passes them: the typed objects, every raw manifest,
	// and the (empty) optional values.
	objs := b.ObjectsToValidate()
	for _, obj := range b.Objects {
		objs = append(objs, obj)
	}
	objs = append(objs, map[string]string{})

	for name, v := range bundleValidators {
		for _, result := range v.Validate(objs...) {
			for _, e := range result.Errors {
				errs = append(errs, name+": "+e.Error())
			}
			for _, w := range result.Warnings {
				warns = append(warns, name+": "+w.Error())
			}
		}
	}
	return errs, warns
}

func TestBundleValidatorsReportNothing(t *testing.T) {
	errs, warns := validate(loadBundle(t))
	for _, e := range errs {
		t.Errorf("error: %s", e)
	}
	for _, w := range warns {
		t.Errorf("warning: %s", w)
	}
	t.Logf("bundle validation: %d validators, %d errors, %d warnings", len(bundleValidators), len(errs), len(warns))
}

// TestBundleValidatorsCatchProblems makes sure the validators are wired to
// the bundle: a CSV with a made-up category and no icon must be reported.
func TestBundleValidatorsCatchProblems(t *testing.T) {
	root := repoRoot(t)
	files, err := olm.RenderBundle(committedOptions(t, root))
	if err != nil {
		t.Fatal(err)
	}
	csvPath := olm.BundleDir + "/manifests/" + olm.PackageName + ".clusterserviceversion.yaml"
	csv := string(files[csvPath])
	csv = regexp.MustCompile(`\n    categories: .*`).ReplaceAllString(csv, "\n    categories: Made Up")
	csv = regexp.MustCompile(`(?s)\n  icon:\n.*?mediatype: image/svg\+xml`).ReplaceAllString(csv, "")
	files[csvPath] = []byte(csv)
	tmp := t.TempDir()
	if err := files.Write(tmp); err != nil {
		t.Fatal(err)
	}
	b, err := manifests.GetBundleFromDir(filepath.Join(tmp, olm.BundleDir))
	if err != nil {
		t.Fatal(err)
	}
	errs, warns := validate(b)
	if len(errs) == 0 || len(warns) == 0 {
		t.Errorf("a bad category and a missing icon gave errors %q and warnings %q, want both", errs, warns)
	}
}

// TestBundleFormatValidates runs operator-registry's own bundle checks, as
// "opm alpha bundle validate" and operator-sdk's format check do: layout,
// annotations, media type, and every manifest decodable and kubectl-able.
func TestBundleFormatValidates(t *testing.T) {
	dir := filepath.Join(repoRoot(t), olm.BundleDir)
	v := registrybundle.NewImageValidator(nil, logrus.NewEntry(logrus.StandardLogger()))
	if err := v.ValidateBundleFormat(dir); err != nil {
		t.Errorf("bundle format: %v", err)
	}
	if err := v.ValidateBundleContent(filepath.Join(dir, "manifests")); err != nil {
		t.Errorf("bundle content: %v", err)
	}
}
