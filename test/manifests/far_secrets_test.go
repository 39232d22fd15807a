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

package manifests

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// farServiceAccount is FAR's manager as FAR's config/default names and
// places it (namespace fence-agents-remediation, namePrefix
// fence-agents-remediation-).
const farServiceAccount = "system:serviceaccount:fence-agents-remediation:fence-agents-remediation-controller-manager"

// contrib/far-secrets gives FAR, deployed from its own manifests, what its
// cluster-wide Secret informer needs and nothing more.
var _ = Describe("contrib/far-secrets", func() {
	It("lets FAR's ServiceAccount read Secrets in every namespace, and write none", func() {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "contrib/far-secrets/clusterrole.yaml"))
		Expect(err).NotTo(HaveOccurred())
		for _, doc := range strings.Split(string(data), "\n---\n") {
			obj := &unstructured.Unstructured{}
			Expect(yaml.Unmarshal([]byte(doc), &obj.Object)).To(Succeed())
			Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, obj))).To(Succeed())
		}
		may := func(verb, namespace string) bool {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: farServiceAccount,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: verb, Resource: "secrets", Namespace: namespace,
				},
			}}
			Expect(k8sClient.Create(ctx, review)).To(Succeed())
			return review.Status.Allowed
		}
		for _, verb := range []string{"get", "list", "watch"} {
			Expect(may(verb, "")).To(BeTrue(), "%s Secrets cluster-wide, as FAR's informer does", verb)
			Expect(may(verb, "far-templates")).To(BeTrue(), "%s Secrets in another namespace", verb)
		}
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			Expect(may(verb, "fence-agents-remediation")).To(BeFalse(), "no %s on Secrets", verb)
		}
	})
})
